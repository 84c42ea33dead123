#!/usr/bin/env Rscript
# Writes packages/backtest/test/fixtures/survey.json: a stratified simple random sample without replacement of a few
# thousand units (with an empty stratum, single-unit strata and fully enumerated strata) and the design-based
# estimates and standard errors of R's `survey` package (Lumley), the reference implementation of
# design-based estimation, for every estimator packages/backtest/src/design/ implements:
#
#   svydesign(ids = ~1, strata = ~h, fpc = ~N_h)   one-stage stratified SRSWOR with the finite population correction
#   svymean, svytotal, svyratio                    on the whole sample
#   the same on subset(design, compared == 1)      domain estimates: what `compare` reports over the compared keys
#                                                  (a failed sampled row is a sampled unit outside the domain)
#
# each under options(survey.lonely.psu = "average", "adjust" and "remove") (R's default, "fail", stops).
#
# Run (Debian: apt-get install -y r-base-core r-cran-survey):
#
#     Rscript packages/backtest/scripts/survey-fixtures.R
#
# Deterministic (set.seed). CI has no R: the JSON is committed and packages/backtest/test/design-fixture.test.ts
# checks bre-batch's estimates and standard errors against it to 1e-9.
suppressMessages(library(survey))
library(jsonlite)

args <- commandArgs(trailingOnly = FALSE)
here <- dirname(normalizePath(sub("^--file=", "", args[grep("^--file=", args)])))
out <- file.path(here, "..", "test", "fixtures", "survey.json")

set.seed(20251125)

# The strata: N_h (population) and n_h (sampled). Most take about 10%, at least 2; the special ones come first.
special <- data.frame(
  name = c("certainty-1", "lonely-5", "empty-40", "census-3", "pair-2", "all-failed-200", "lonely-50"),
  N = c(1, 5, 40, 3, 2, 200, 50),
  n = c(1, 1, 0, 3, 2, 2, 1),
  stringsAsFactors = FALSE
)
H <- 45
Nh <- round(exp(runif(H, log(20), log(4000))))
nh <- pmax(pmin(2, Nh), round(0.09 * Nh))
strata <- rbind(special, data.frame(name = sprintf("s%02d", seq_len(H)), N = Nh, n = nh, stringsAsFactors = FALSE))

units <- do.call(rbind, lapply(seq_len(nrow(strata)), function(i) {
  n <- strata$n[i]
  if (n == 0) return(NULL)
  pA <- runif(1, 0.15, 0.85)
  apprA <- rbinom(n, 1, pA)
  # The challenger flips some decisions: swap-out and swap-in.
  apprB <- ifelse(apprA == 1, rbinom(n, 1, 0.9), rbinom(n, 1, 0.12))
  # Outcome: bad more likely among rejects; unknown for most of A's rejects (never lent to) and some approvals.
  bad <- rbinom(n, 1, ifelse(apprA == 1, 0.06, 0.2))
  known <- ifelse(apprA == 1, rbinom(n, 1, 0.85), rbinom(n, 1, 0.3))
  bad[known == 0] <- NA
  amtA <- ifelse(apprA == 1, round(runif(n, 5000, 50000) / 500) * 500, 0)
  amtB <- ifelse(apprB == 1, ifelse(apprA == 1, amtA + round(rnorm(n, 0, 4000) / 500) * 500, round(runif(n, 5000, 30000) / 500) * 500), 0)
  amtB <- pmax(amtB, 0)
  compared <- rbinom(n, 1, 0.95)
  if (strata$name[i] == "all-failed-200") compared[] <- 0
  data.frame(h = strata$name[i], N_h = strata$N[i], compared = compared, apprA = apprA, apprB = apprB, bad = bad,
             amtA = amtA, amtB = amtB, stringsAsFactors = FALSE)
}))

# The variables the estimators see (0 where a unit is outside a set).
u <- within(units, {
  one <- 1
  known_i <- as.numeric(!is.na(bad))
  bad0 <- ifelse(is.na(bad), 0, bad)
  diff <- apprB - apprA
  swap_in <- as.numeric(apprA == 0 & apprB == 1)
  swap_out <- as.numeric(apprA == 1 & apprB == 0)
  badA <- bad0 * apprA
  knownA <- known_i * apprA
  badB <- bad0 * apprB
  knownB <- known_i * apprB
  amt_change <- amtB - amtA
})

columns <- c("one", "apprA", "apprB", "diff", "swap_in", "swap_out", "badA", "knownA", "badB", "knownB", "amtA", "amtB", "amt_change")

estimate <- function(kind, design, y, x = NULL) {
  if (kind == "mean") r <- svymean(as.formula(paste0("~", y)), design)
  if (kind == "total") r <- svytotal(as.formula(paste0("~", y)), design)
  if (kind == "ratio") {
    r <- svyratio(as.formula(paste0("~", y)), as.formula(paste0("~", x)), design)
    return(list(estimate = unname(coef(r))[1], se = unname(sqrt(vcov(r)))[1]))
  }
  list(estimate = unname(coef(r))[1], se = unname(SE(r))[1])
}

plan <- list(
  list("mean", "apprA"), list("mean", "diff"), list("mean", "swap_out"),
  list("total", "one"), list("total", "apprA"), list("total", "swap_in"), list("total", "swap_out"),
  list("total", "amtA"), list("total", "amtB"), list("total", "amt_change"),
  list("ratio", "badA", "knownA"), list("ratio", "badB", "knownB"), list("ratio", "swap_out", "apprA")
)

cases <- list()
for (lonely in c("average", "adjust", "remove")) {
  options(survey.lonely.psu = lonely)
  des <- svydesign(ids = ~1, strata = ~h, fpc = ~N_h, data = u)
  dom <- subset(des, compared == 1)
  for (p in plan) {
    kind <- p[[1]]; y <- p[[2]]; x <- if (length(p) > 2) p[[3]] else NULL
    for (domain in c(FALSE, TRUE)) {
      r <- suppressWarnings(estimate(kind, if (domain) dom else des, y, x))
      cases[[length(cases) + 1]] <- list(lonely = lonely, kind = kind, y = y, x = if (is.null(x)) NA else x,
                                         domain = domain, estimate = r$estimate, se = r$se)
    }
  }
}

# A domain estimate is the estimate over the domain's units alone with each stratum's n_h kept (subset() drops
# the other rows and onestrat() pads the stratum with zeros up to n_h): the same as a ratio on the whole design
# with the domain indicator. packages/backtest/src/design/ relies on this to keep only the compared units. (Under
# "average" the two differ when a lonely stratum has no domain unit: subset() no longer counts that stratum.)
options(survey.lonely.psu = "remove")
des <- svydesign(ids = ~1, strata = ~h, fpc = ~N_h, data = transform(u, d_apprA = apprA * compared))
d_ratio <- svyratio(~d_apprA, ~compared, des)
d_mean <- svymean(~apprA, subset(des, compared == 1))
stopifnot(abs(coef(d_ratio) - coef(d_mean)) < 1e-12, abs(sqrt(vcov(d_ratio)) - SE(d_mean)) < 1e-12)

doc <- list(
  generator = "packages/backtest/scripts/survey-fixtures.R",
  r_version = R.version.string,
  survey_version = as.character(packageVersion("survey")),
  design = "svydesign(ids = ~1, strata = ~h, fpc = ~N_h); domain = subset(design, compared == 1)",
  strata = strata,
  units = c(list(h = u$h, compared = u$compared), lapply(setNames(columns, columns), function(col) u[[col]])),
  cases = cases
)
dir.create(dirname(out), recursive = TRUE, showWarnings = FALSE)
writeLines(toJSON(doc, auto_unbox = TRUE, digits = NA, na = "null", pretty = FALSE, dataframe = "rows"), out)
cat(sprintf("wrote %s: %d strata, %d sampled units, %d cases\n", out, nrow(strata), nrow(u), length(cases)))
