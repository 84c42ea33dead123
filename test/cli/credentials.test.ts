/** Base URLs and credentials from the environment (src/cli/credentials.ts), read as a person sets them. */
import { describe, expect, it } from 'vitest';
import { endpointsFromEnv } from '../../src/cli/credentials.js';

const creds = { BRE_CLIENT_ID: 'client', BRE_AUTH_TOKEN: 'token' };

describe('base URLs from the environment', () => {
  it('an empty variable is unset: the service falls back to BRE_BASE_URL, not refused as got ""', () => {
    const e = endpointsFromEnv({ ...creds, BRE_BASE_URL: 'https://bre.example.com', BUREAU_BASE_URL: '' });
    expect(e.baseUrls).toEqual({
      workflow: 'https://bre.example.com',
      bureau: 'https://bre.example.com',
      account: 'https://bre.example.com',
    });
    expect(
      endpointsFromEnv({ ...creds, ACCOUNT_BASE_URL: ' ', BUREAU_BASE_URL: 'https://b.example.com' }).baseUrls,
    ).toMatchObject({ account: 'https://b.example.com', bureau: 'https://b.example.com' });
  });

  it('every base URL empty is none set: the built-in sandbox', () => {
    expect(endpointsFromEnv({ BRE_BASE_URL: '', BUREAU_BASE_URL: '', ACCOUNT_BASE_URL: '' }).baseUrls).toBeNull();
  });

  it('a value that is there and wrong is still refused, named', () => {
    expect(() => endpointsFromEnv({ ...creds, BUREAU_BASE_URL: 'bureau.example.com' })).toThrow(
      "Expected BUREAU_BASE_URL to be a URL such as https://bre.example.com, got 'bureau.example.com'",
    );
  });
});
