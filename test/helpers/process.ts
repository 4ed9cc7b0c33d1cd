// Whole-process tests: start the real CLI (`node src/main.ts <role>`, or `npm start`) and talk to it over HTTP.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { waitUntil } from './wait.ts';

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  stdout(): string;
  stderr(): string;
  /** Sends a signal and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Environment for a child process: the parent's, minus the test runner's database settings. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const name of ['DATABASE_URL', 'TEST_DATABASE_URL', 'NODE_TEST_CONTEXT', 'REDIS_URL'])
    delete base[name];
  return { ...base, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env };
}

/** Starts a role and resolves once it logs the address it listens on. */
export async function startService(
  role: string,
  env: Record<string, string>,
  timeoutMs = 90_000,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['src/main.ts', role], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watchUntilListening(child, role, timeoutMs, async (signal) => {
    if (exited(child)) return;
    child.kill(signal);
    await once(child, 'exit');
  });
}

/**
 * Runs exactly the README's `npm start` (the `start` script: `serve` through npm and `sh -c`), in a process
 * group of its own. stop() signals the whole group, as Ctrl-C in a terminal does: npm hands a signal only to
 * its `sh`, which does not pass it on, so signalling npm alone would leave the server running. stop() resolves
 * once every process of the group is gone, and answers npm's exit code (null when npm ended by the signal,
 * as it does after passing it on; the server's own exit shows in its log).
 */
export async function startNpmStart(
  env: Record<string, string>,
  timeoutMs = 90_000,
): Promise<ServiceProcess> {
  const child = spawn('npm', ['start'], {
    env: childEnv({ npm_config_update_notifier: 'false', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const group = -child.pid!;
  const groupAlive = () => {
    try {
      process.kill(group, 0);
      return true;
    } catch {
      return false;
    }
  };
  return watchUntilListening(child, 'npm start', timeoutMs, async (signal) => {
    const npmExit = exited(child) ? undefined : once(child, 'exit');
    if (groupAlive()) process.kill(group, signal);
    await npmExit;
    await waitUntil(() => !groupAlive(), 'every process of npm start exited', 30_000);
  });
}

const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null;

async function watchUntilListening(
  child: ChildProcess,
  label: string,
  timeoutMs: number,
  signalAndWait: (signal: NodeJS.Signals) => Promise<void>,
): Promise<ServiceProcess> {
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Nothing of a start that failed is left running.
      void signalAndWait('SIGKILL').catch(() => {});
      reject(new Error(`${label} did not start in time:\n${out}\n${err}`));
    }, timeoutMs);
    const check = () => {
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code} before listening:\n${out}\n${err}`));
    });
  });
  return {
    child,
    baseUrl,
    stdout: () => out,
    stderr: () => err,
    async stop(signal = 'SIGTERM') {
      await signalAndWait(signal);
      return child.exitCode;
    },
  };
}

/** Runs a role to completion (e.g. one that must refuse to start); returns its exit code and output. */
export async function runToExit(
  role: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['src/main.ts', role], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}
