import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { missingReport } from '../../scripts/test-tools.js';
import { ROOT } from '../helpers/cli.js';
import { installCommand, missingBinaries, TEST_TOOLS, testFilesNeeding } from '../helpers/tools.js';

const tool = (name: string) => {
  const found = TEST_TOOLS.find((t) => t.name === name);
  if (!found) throw new Error(name);
  return found;
};

describe("the tests' tools", () => {
  it('each names a helper that exists and at least one test file that needs it', () => {
    for (const t of TEST_TOOLS) {
      expect(existsSync(join(ROOT, 'test', 'helpers', `${t.helper}.ts`)), t.name).toBe(true);
      expect(testFilesNeeding(ROOT, t.helper).length, t.name).toBeGreaterThan(0);
    }
  });

  it('finds the files by their imports: the network test needs nginx, the image test the Pushgateway too', () => {
    expect(testFilesNeeding(ROOT, 'network-servers')).toContain('test/e2e/network.test.ts');
    expect(testFilesNeeding(ROOT, 'pushgateway')).toEqual(
      expect.arrayContaining(['test/e2e/pushgateway.test.ts', 'test/container/image.test.ts']),
    );
    expect(testFilesNeeding(ROOT, 'chromium')).toContain('test/report/run-report-render.process.test.ts');
  });

  it('a missing executable is named by its path', () => {
    const fake = { ...tool('Chromium'), binaries: [['/nonexistent/chromium']] };
    expect(missingBinaries(fake)).toEqual(['/nonexistent/chromium']);
    expect(missingBinaries(tool('podman, runc and debootstrap')).length).toBeLessThanOrEqual(3);
  });

  it('the block names what is missing, the command that installs it, and the test files that will not run', () => {
    const text = missingReport(ROOT, [tool('nginx, tinyproxy and openssl'), tool('Redis')]);
    expect(text).toContain(
      `- nginx, tinyproxy and openssl: ${installCommand(['nginx-light', 'tinyproxy', 'openssl'])}`,
    );
    expect(text).toContain('      test/e2e/network.test.ts');
    expect(text).toContain('- Redis answering on 127.0.0.1:6379: apt-get install -y redis-server (then start it)');
    expect(text).toMatch(/skipped with a message \(under CI=true they fail\)/);
  });
});
