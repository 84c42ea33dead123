/** compare.json `methods` entries of a sampled comparison (merged before the others; report.html lists them). */
import { Z95 } from '../stats.js';

export const SAMPLE_METHODS: Readonly<Record<string, string>> = {
  sample_design:
    'stratified simple random sample without replacement (manifest.json `sample`); each sampled key weighs N_h / n_h of its stratum',
  sample_estimates:
    "population estimates over the compared keys, a domain of the sample: rates and shares are ratios Σw·y / Σw·x, counts and amounts totals Σw·y (R survey's svyratio and svytotal on subset(design, compared))",
  sample_intervals: `95% interval: estimate ± ${Z95.toFixed(4)}·SE (normal quantile, as R's confint), clipped to the possible range (a rate to [0, 1]); SE from the stratified variance with the finite population correction, Σ_h (1 − n_h/N_h)·n_h/(n_h − 1)·Σ_i (z_i − z̄_h)², z the linearised values`,
  sample_missing:
    'a sampled row that failed, that one run lacks or that an unfinished run has not reached is a sampled unit outside the compared keys: a zero in its stratum, counted and shown, never a smaller stratum; the estimates are of what compare would report over a run of every row',
  sample_lonely:
    "a stratum with one sampled row of several gets the average variance of the others (R's survey.lonely.psu = 'average'); a stratum sampled whole adds none; strata with no compared key are outside the estimates (listed as uncovered)",
  sample_scores:
    'AUC (weighted Mann–Whitney), Gini = 2·AUC − 1 and KS (weighted ECDFs) with the design weights; SE from a rescaling bootstrap within strata (Rao–Wu, m_h = n_h − 1, carries the fpc), seeded from the sample seed',
  sample_psi:
    "PSI from the estimated population shares of A's bins; no interval (PSI ≥ 0 is not normal near 0, where a linearised SE is 0)",
  sample_only:
    "figures marked 'sample only' (crosstab, rules, features, segments, vintages, deciles, trade-off, DeLong) count the sampled keys unweighted: they describe the sample, not the population",
};
