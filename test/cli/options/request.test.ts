/**
 * The whole of `run`'s resolution (src/cli/run-options/index.ts): the pipeline and the services' addresses and
 * credentials come through the context, never from this process.
 */
import { describe, expect, it } from 'vitest';
import { resolveRunRequest } from '../../../src/cli/run-options/index.js';
import { fakeContext, parseRun, refusal, resolveArgs } from './parse.js';

describe('the pipeline', () => {
  it('is loaded through the context, by the name or path given', () => {
    const asked: string[] = [];
    const base = fakeContext();
    const r = resolveArgs(
      [],
      fakeContext({
        loadPipeline: (ref) => {
          asked.push(ref);
          return base.loadPipeline(ref);
        },
      }),
    );
    expect(asked).toEqual(['location']);
    expect(r.settings.pipeline.name).toBe('location');
  });
});

describe('the command that resumes the run', () => {
  it('is carried as the command line gave it, for the stop message', () => {
    expect(
      resolveRunRequest(parseRun([]), fakeContext(), "bre-batch run location --input 'my file.csv'").resumeCommand,
    ).toBe("bre-batch run location --input 'my file.csv'");
  });
});

describe('the services', () => {
  it('are the built-in sandbox when no base URL is set', () => {
    expect(resolveArgs([]).endpoints).toEqual({ baseUrls: null, clientId: undefined, authToken: undefined });
  });

  it("are the base URLs of the context's environment, with its credentials", () => {
    const ctx = fakeContext({
      env: { BRE_BASE_URL: 'https://bre.example.com/', BRE_CLIENT_ID: 'c1', BRE_AUTH_TOKEN: 't1' },
    });
    expect(resolveArgs([], ctx).endpoints).toEqual({
      baseUrls: {
        workflow: 'https://bre.example.com',
        bureau: 'https://bre.example.com',
        account: 'https://bre.example.com',
      },
      clientId: 'c1',
      authToken: 't1',
    });
  });

  it('take the token from BRE_AUTH_TOKEN_FILE through the context', () => {
    const ctx = fakeContext({
      env: { BRE_BASE_URL: 'https://bre.example.com', BRE_CLIENT_ID: 'c1', BRE_AUTH_TOKEN_FILE: '/run/secrets/token' },
      readSecretFile: (path, what) => `${what}:${path}`,
    });
    expect(resolveArgs([], ctx).endpoints.authToken).toBe('BRE_AUTH_TOKEN_FILE:/run/secrets/token');
  });

  it('need credentials with a base URL, unless nothing is called', () => {
    const ctx = fakeContext({ env: { BRE_BASE_URL: 'https://bre.example.com' } });
    expect(refusal([], ctx).code).toBe('CONFIG_INVALID');
    expect(resolveArgs(['--dry-run'], ctx).endpoints.baseUrls).not.toBeNull();
    expect(resolveArgs(['--plan'], ctx).endpoints.baseUrls).not.toBeNull();
  });
});
