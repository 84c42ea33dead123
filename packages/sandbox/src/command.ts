/**
 * `bre-batch sandbox` and `bre-sandbox` (./cli.ts): starts the emulator of the three services on loopback
 * (CONTRACT: sandbox row), prints its base URL, credentials and the env lines to export, and runs until
 * SIGINT/SIGTERM. Option parsing lives in ./options.ts (pure, tested there); bad options are BreError('USAGE'),
 * which either CLI turns into exit code 2.
 */
import type { CommandModule } from 'yargs';
import { BreError } from '@bre-batch/core/errors';
import { DEFAULT_AUTH_TOKEN, SANDBOX_LIMITS, startSandbox } from './index.js';
import { sandboxBanner } from './banner.js';
import { parseSandboxFlags, type SandboxFlags } from './options.js';
import { SERVICES, type ServiceName } from '@bre-batch/core/types';
import type { Rate } from './rate.js';

export const sandboxCommand: CommandModule = {
  command: 'sandbox',
  describe: 'start the built-in emulator of all three services on loopback and print its base URL and credentials',
  builder: (y) =>
    y
      .option('port', { type: 'string', describe: 'port to listen on (default: a free one)' })
      .option('host', { type: 'string', describe: 'address to listen on (default 127.0.0.1)' })
      .option('rate', {
        type: 'string',
        array: true,
        describe: 'limit enforced per caller IP: SERVICE=N/UNIT (UNIT s or min), SERVICE=off, or off for all',
      })
      .option('caller-rate', {
        type: 'string',
        array: true,
        describe:
          'one caller address with its own limit over --rate: ADDR:SERVICE=N/UNIT (e.g. 127.0.0.3:workflow=250/min), repeatable',
      })
      .option('latency-ms', { type: 'string', describe: 'delay added to every answer, ms (default 0)' })
      .option('faults', {
        type: 'string',
        describe:
          'fault probabilities, e.g. 429=0.05,503=0.02,reset=0.01,slow=0.01,malformed=0.01,empty=0.01,html=0.01,trickle=0.01,endless=0.01',
      })
      .option('seed', { type: 'string', describe: 'seed of the fault generator (default random)' })
      .option('allow', {
        type: 'string',
        array: true,
        describe: 'caller IP allow-list, CIDR or address (default loopback only)',
      })
      .option('bsa-ready-after', {
        type: 'string',
        describe: 'ms a BSA session stays "processing" after its first status_check (default 2000)',
      })
      .option('slow-ms', { type: 'string', describe: 'how long a "slow" fault hangs, ms (default 60000)' })
      .option('trickle-ms', {
        type: 'string',
        describe: 'ms between the bytes of a "trickle" fault\'s body (default 1000)',
      })
      .option('throttle-for', {
        type: 'string',
        describe:
          'a gateway that answers every service call 429 for this long from the first call (e.g. 20s), then lets calls through',
      })
      .option('throttle-retry-after', {
        type: 'string',
        describe: "the Retry-After of --throttle-for's 429s, whole seconds (default 0, as some gateways send)",
      })
      .option('switch-version', {
        type: 'string',
        array: true,
        describe:
          'a workflow endpoint answering with another version from a call or a time on: ENDPOINT=VERSION@call:N or ENDPOINT=VERSION@after:DURATION (e.g. location_bre=v2@call:100), repeatable',
      }),
  handler: async (argv) => {
    const flags = parseSandboxFlags(argv as SandboxFlags);
    let sb: Awaited<ReturnType<typeof startSandbox>>;
    try {
      sb = await startSandbox({ ...flags });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
        throw new BreError(
          'CONFIG_INVALID',
          `Expected a free port on an address of this machine, got ${flags.host}:${flags.port} (${code})`,
          { field: 'port', cause: err },
        );
      }
      throw err;
    }
    const rates = Object.fromEntries(
      SERVICES.map((s) => [s, flags.rate[s] === undefined ? SANDBOX_LIMITS[s] : flags.rate[s]]),
    ) as Record<ServiceName, Rate | null>;
    process.stdout.write(
      sandboxBanner({
        url: sb.url,
        clientId: sb.clientId,
        authToken: sb.authToken,
        defaultToken: sb.authToken === DEFAULT_AUTH_TOKEN && !process.env.BRE_AUTH_TOKEN,
        rates,
        callerRates: flags.callerRates ?? {},
        faults: flags.faults,
        latencyMs: flags.latencyMs,
        seed: sb.stats().seed,
        versionSwitches: flags.versionSwitches,
      }),
    );
    await new Promise<void>((resolve) => {
      const stop = () => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        resolve();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    await sb.close();
    process.stdout.write('bre-batch sandbox: stopped\n');
  },
};
