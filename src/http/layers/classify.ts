/**
 * Classification: an answer becomes its parsed body, or a BreError with the code the spec's error tables
 * give it (../classify.ts). The layers above decide by that code alone (retry, the limiter's pause).
 */
import { classifyResponse } from '../classify.js';
import type { HttpResponse } from '../transport.js';
import type { Layer } from './types.js';

export const classify: Layer<HttpResponse, unknown> = (next) => async (a) => classifyResponse(a.service, await next(a));
