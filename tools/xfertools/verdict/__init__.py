"""A set of runs judged against the noise a history shows: the statistics tools/track and
compare.py share.

noise       what a history of runs says about noise: baselines, family shifts, row spreads
changepoint where a series changed level (E-divisive means), and the baseline window after it
decide      a run judged against that noise: per family, then per row, false-discovery control
synthetic   synthetic histories for the tests
"""
