/** A sandbox for the e2e tests, with a distinctive token and the environment that points the CLI at it. */
import { randomBytes } from 'node:crypto';
import { startSandbox, type Sandbox, type SandboxOptions } from '@bre-batch/sandbox';

export interface TestSandbox {
  readonly sandbox: Sandbox;
  readonly token: string;
  /** Environment for the CLI pointing every service at `url` (default: the sandbox itself). */
  env(url?: string, extra?: Record<string, string | undefined>): Record<string, string | undefined>;
  close(): Promise<void>;
}

/** A sandbox with a distinctive token (`tok` + random hex), so a test can search outputs for it. */
export async function startTestSandbox(opts: SandboxOptions = {}): Promise<TestSandbox> {
  const token = opts.authToken ?? `tok${randomBytes(12).toString('hex')}`;
  const sandbox = await startSandbox({ clientId: 'e2eclient', ...opts, authToken: token });
  return {
    sandbox,
    token,
    env: (url = sandbox.url, extra = {}) => ({
      BRE_BASE_URL: url,
      BUREAU_BASE_URL: url,
      ACCOUNT_BASE_URL: url,
      BRE_CLIENT_ID: sandbox.clientId,
      BRE_AUTH_TOKEN: token,
      ...extra,
    }),
    close: () => sandbox.close(),
  };
}
