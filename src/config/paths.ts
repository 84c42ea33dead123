/** Where the package's own folders are, both from src/ (tests) and dist/ (the built CLI): two levels up. */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const PIPELINES_DIR = join(PACKAGE_ROOT, 'pipelines');
