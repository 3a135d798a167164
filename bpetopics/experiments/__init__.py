"""Experiments that compare models and write result tables.

:mod:`~bpetopics.experiments.text_comparison` (PoissBPE against the text baselines over
seeds: ``bpetopics compare``), :mod:`~bpetopics.experiments.image_table` and
:mod:`~bpetopics.experiments.image_table_plots` (the paper's Table 1 on images:
``bpetopics images``).
"""
