/**
 * `run`'s network options (proxy, client certificates, CAs), shown with the limits in `run --help`. Their
 * definitions and resolution are ../network-options.ts's; that resolution reads the certificate files, so the
 * command's handler calls it (./index.ts stays pure), and only for the user's base URLs: the built-in sandbox
 * is in-process.
 */
import { NETWORK_OPTIONS } from '../network-options.js';
import type { OptionFamily } from './family.js';

export type { NetworkArgs } from '../network-options.js';

export const NETWORK_FAMILY = {
  title: 'Limits and network:',
  options: NETWORK_OPTIONS,
} as const satisfies OptionFamily;
