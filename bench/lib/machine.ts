// The machine a result was measured on.
import { execFileSync } from 'node:child_process';
import os from 'node:os';

export interface Machine {
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  os: string;
  node: string;
  /** PostgreSQL server version and whether it was the embedded server or BENCH_DATABASE_URL. */
  postgres: string | undefined;
  /** 1-minute load average when the scenario started: other work on the machine skews results. */
  loadAverage: number;
  gitCommit: string | undefined;
}

function gitCommit(): string | undefined {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', 'src'], {
      encoding: 'utf8',
    }).trim();
    return dirty ? `${commit} (src/ modified)` : commit;
  } catch {
    return undefined;
  }
}

export function machineInfo(postgres: string | undefined): Machine {
  const cpus = os.cpus();
  return {
    cores: os.availableParallelism(),
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    postgres,
    loadAverage: Math.round((os.loadavg()[0] ?? 0) * 100) / 100,
    gitCommit: gitCommit(),
  };
}
