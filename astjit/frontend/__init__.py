"""From a Python function to a rewritten function whose array blocks call Fragments."""
