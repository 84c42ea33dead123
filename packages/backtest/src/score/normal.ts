/**
 * The standard normal distribution's tail, for the p-value of the paired DeLong test. erfc by the Chebyshev
 * fit of Numerical Recipes (2nd ed., §6.2, `erfcc`): fractional error below 1.2e-7 everywhere, which is far
 * finer than a p-value is ever read, and it needs no table.
 */

export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/** Two-sided p-value of a standard normal statistic: P(|Z| ≥ |z|). */
export function twoSidedP(z: number): number {
  return Math.min(1, erfc(Math.abs(z) / Math.SQRT2));
}
