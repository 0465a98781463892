"""Random choices for the program generator, from one seed.

Every program is made from a single seed that Hypothesis draws: its examples are then all distinct
programs (Hypothesis's own draws repeat small programs many times), and any program the campaign
reports is rebuilt exactly from its seed with ``make_program(seed)``.
"""

import random


class Chooser:
    def __init__(self, seed: int):
        self.random = random.Random(seed)

    def pick(self, options):
        options = list(options)
        return options[self.random.randrange(len(options))]

    def weighted(self, weights: dict):
        """One key of ``weights``, with probability proportional to its (integer) weight."""
        keys = [k for k, w in weights.items() if w > 0]
        return self.random.choices(keys, [weights[k] for k in keys])[0]

    def chance(self, percent: float) -> bool:
        return self.random.random() * 100 < percent

    def integer(self, lo: int, hi: int) -> int:
        """An int in ``[lo, hi]``, both ends included."""
        return self.random.randint(lo, hi)

    def sample(self, population, k: int) -> list:
        return self.random.sample(list(population), k)
