/** What `bre-batch sandbox` prints at start: where it listens, the credentials, the env lines to export. */
import { SERVICES, type ServiceName } from '@bre-batch/core/types';
import { describeRate } from '@bre-batch/core/rates';
import { describeFaults, type CallerRates, type Faults } from './options.js';
import type { Rate } from './rate.js';
import type { VersionSwitch } from './versions.js';

export interface BannerInput {
  readonly url: string;
  readonly clientId: string;
  readonly authToken: string;
  /** True when the token is the built-in default (then it is printed; otherwise it came from BRE_AUTH_TOKEN). */
  readonly defaultToken: boolean;
  readonly rates: Readonly<Record<ServiceName, Rate | null>>;
  /** Single caller addresses with their own limits (--caller-rate); none when empty. */
  readonly callerRates?: CallerRates;
  readonly faults: Faults;
  readonly latencyMs: number;
  readonly seed: number | string;
  /** --switch-version: endpoints answering with another version from a call or a time on. */
  readonly versionSwitches?: readonly VersionSwitch[];
}

export function sandboxBanner(b: BannerInput): string {
  const token = b.defaultToken ? `${b.authToken} (built-in default)` : 'from BRE_AUTH_TOKEN';
  const lines = [
    `bre-batch sandbox: workflow, bureau and account services on ${b.url}`,
    `  client id    ${b.clientId}`,
    `  auth token   ${token}`,
    `  rate limits  ${SERVICES.map((s) => `${s} ${describeRate(b.rates[s])}`).join(', ')} (per caller IP, sliding window)`,
    ...Object.entries(b.callerRates ?? {}).map(
      ([address, own]) =>
        `  caller ${address}  ${Object.entries(own)
          .map(([s, r]) => `${s} ${describeRate(r)}`)
          .join(', ')} (its own window, over the limits above)`,
    ),
    `  faults       ${describeFaults(b.faults)} (seed ${b.seed})`,
    `  latency      ${b.latencyMs} ms`,
    ...(b.versionSwitches ?? []).map(
      (v) =>
        `  version      ${v.endpoint} answers ${v.to} from ${v.atCall !== undefined ? `its call ${v.atCall}` : `${v.afterMs} ms after the start`} on`,
    ),
    `  control      GET ${b.url}/__sandbox/stats, POST ${b.url}/__sandbox/clock {"advanceMs": N}, POST ${b.url}/__sandbox/faults {...}`,
    '',
    `export BRE_BASE_URL=${b.url}`,
    `export BUREAU_BASE_URL=${b.url}`,
    `export ACCOUNT_BASE_URL=${b.url}`,
    `export BRE_CLIENT_ID=${b.clientId}`,
  ];
  if (b.defaultToken) lines.push(`export BRE_AUTH_TOKEN=${b.authToken}`);
  lines.push('', 'Ctrl+C (SIGINT) or SIGTERM stops the sandbox.', '');
  return lines.join('\n');
}
