/**
 * Credentials and base URLs from the environment. The token comes only from BRE_AUTH_TOKEN or from a file
 * named by BRE_AUTH_TOKEN_FILE that only its owner can read; it is never accepted on the command line,
 * where it would be visible in `ps` and shell history.
 */
import { readFileSync, statSync, type Stats } from 'node:fs';
import { BreError } from '@bre-batch/core/errors';
import type { ServiceName } from '@bre-batch/core/types';

export interface Endpoints {
  /** null when no base URL is set at all: the built-in sandbox is used. */
  readonly baseUrls: Record<ServiceName, string> | null;
  readonly clientId?: string;
  readonly authToken?: string;
}

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i;

function checkBaseUrl(name: string, value: string): string {
  if (!URL.canParse(value))
    throw new BreError(
      'CONFIG_INVALID',
      `Expected ${name} to be a URL such as https://bre.example.com, got '${value}'`,
    );
  const url = new URL(value);
  if (url.protocol === 'https:') return value.replace(/\/+$/, '');
  if (url.protocol === 'http:' && LOOPBACK.test(url.hostname)) return value.replace(/\/+$/, '');
  throw new BreError(
    'CONFIG_INVALID',
    `Expected ${name} to use https:// (plain http is allowed only on loopback), got '${url.protocol}//${url.host}'`,
  );
}

/**
 * A secret kept in a file: refused unless only its owner can read it (chmod 600), since anyone who can read
 * it holds the secret. `what` names it in messages (e.g. `BRE_AUTH_TOKEN_FILE ${path}`).
 */
export function readOwnerOnlyFile(path: string, what: string): string {
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    throw new BreError('CONFIG_INVALID', `${what} names ${path}, which cannot be read`);
  }
  if ((st.mode & 0o077) !== 0) {
    throw new BreError(
      'CONFIG_INVALID',
      `Expected ${what} ${path} to be readable by its owner only (chmod 600), got mode ${(st.mode & 0o777).toString(8)}`,
    );
  }
  return readFileSync(path, 'utf8').trim();
}

type Env = Readonly<Record<string, string | undefined>>;
type ReadSecret = (path: string, what: string) => string;

function readToken(env: Env, read: ReadSecret = readOwnerOnlyFile): string | undefined {
  if (env.BRE_AUTH_TOKEN) return env.BRE_AUTH_TOKEN.trim();
  const file = env.BRE_AUTH_TOKEN_FILE;
  if (!file) return undefined;
  return read(file, 'BRE_AUTH_TOKEN_FILE');
}

/** `callsNothing`: --plan and --dry-run make no call, so they need no credentials. */
export function endpointsFromEnv(env: Env, callsNothing = false, read: ReadSecret = readOwnerOnlyFile): Endpoints {
  // An empty variable (`BUREAU_BASE_URL=` in a crontab or an env file) is unset, as the shell's `${VAR:-...}` takes it.
  const bre = env.BRE_BASE_URL?.trim() || undefined;
  const bureau = env.BUREAU_BASE_URL?.trim() || undefined;
  const account = env.ACCOUNT_BASE_URL?.trim() || undefined;
  const clientId = env.BRE_CLIENT_ID?.trim() || undefined;
  const authToken = readToken(env, read);
  if (!bre && !bureau && !account) return { baseUrls: null, clientId, authToken };
  // Each checked under its own name (a wrong value is named by the variable that holds it); a service without
  // its own base URL falls back to BRE_BASE_URL (one gateway for all three), else to the other one set.
  const own = {
    workflow: bre === undefined ? undefined : checkBaseUrl('BRE_BASE_URL', bre),
    bureau: bureau === undefined ? undefined : checkBaseUrl('BUREAU_BASE_URL', bureau),
    account: account === undefined ? undefined : checkBaseUrl('ACCOUNT_BASE_URL', account),
  };
  const fallback = (own.workflow ?? own.bureau ?? own.account)!;
  const baseUrls = {
    workflow: own.workflow ?? fallback,
    bureau: own.bureau ?? fallback,
    account: own.account ?? fallback,
  };
  if ((!clientId || !authToken) && !callsNothing) {
    throw new BreError(
      'CONFIG_INVALID',
      'a base URL is set, so credentials are needed: set BRE_CLIENT_ID and BRE_AUTH_TOKEN (or BRE_AUTH_TOKEN_FILE)',
    );
  }
  return { baseUrls, clientId, authToken };
}
