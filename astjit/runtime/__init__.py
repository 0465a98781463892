"""Fragments at run time: specialization cache, execution plans, fallback records."""
