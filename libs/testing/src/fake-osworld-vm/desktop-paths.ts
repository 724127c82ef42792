import { isAbsolute, join, posix, resolve, sep } from 'node:path';

// The fake desktop's file system: the real one, with mount points (always `/home/user`, plus any a
// test adds) redirected into the sandbox. Commands see the same view: mounted paths in their
// arguments are rewritten to the sandbox, and the sandbox paths in their output back again.

export const DESKTOP_HOME = '/home/user';

/** The environment the VM server runs with (osworld_server.service), for `$VAR` expansion. */
const DESKTOP_ENVIRONMENT: Readonly<Record<string, string>> = {
  HOME: DESKTOP_HOME,
  USER: 'user',
  LOGNAME: 'user',
  DISPLAY: ':0',
  XDG_RUNTIME_DIR: '/run/user/1000',
};

export interface Mount {
  readonly desktop: string;
  readonly local: string;
}

export class DesktopPaths {
  private readonly mounts: Mount[];

  constructor(
    readonly root: string,
    extraMounts: readonly string[] = [],
  ) {
    this.mounts = [DESKTOP_HOME, ...extraMounts]
      .map((desktop) => posix.normalize(desktop).replace(/\/+$/, ''))
      .map((desktop) => ({ desktop, local: join(root, desktop) }))
      // Longest first, so a nested mount wins over its parent.
      .sort((a, b) => b.desktop.length - a.desktop.length);
  }

  get home(): string {
    return this.toLocal(DESKTOP_HOME);
  }

  addMount(desktop: string): void {
    const normalized = posix.normalize(desktop).replace(/\/+$/, '');
    if (this.mounts.some((mount) => mount.desktop === normalized)) return;
    this.mounts.push({ desktop: normalized, local: join(this.root, normalized) });
    this.mounts.sort((a, b) => b.desktop.length - a.desktop.length);
  }

  /** A desktop path (absolute, or relative to the server's cwd `/home/user`) on this machine. */
  toLocal(desktopPath: string): string {
    const absolute = posix.resolve(DESKTOP_HOME, desktopPath);
    for (const mount of this.mounts) {
      if (absolute === mount.desktop) return mount.local;
      if (absolute.startsWith(`${mount.desktop}/`))
        return join(mount.local, absolute.slice(mount.desktop.length + 1));
    }
    return absolute;
  }

  /** Whether a local path may be written: only inside the sandbox. */
  isInsideSandbox(localPath: string): boolean {
    const absolute = resolve(localPath);
    return absolute === this.root || absolute.startsWith(this.root + sep);
  }

  /** Python's `os.path.expanduser` then `os.path.expandvars`, with the desktop's user and environment. */
  expandUserAndVars(path: string): string {
    let expanded = path;
    if (expanded === '~' || expanded.startsWith('~/')) expanded = DESKTOP_HOME + expanded.slice(1);
    return expanded.replace(/\$(\w+)|\$\{([^}]*)\}/g, (whole, bare?: string, braced?: string) => {
      const value = DESKTOP_ENVIRONMENT[bare ?? braced ?? ''];
      return value ?? whole;
    });
  }

  /** Mounted desktop paths inside a command argument or shell string, rewritten to the sandbox. */
  rewriteCommandText(text: string): string {
    let rewritten = text;
    for (const mount of this.mounts) {
      const pattern = new RegExp(`(?<![\\w.~/-])${escapeRegExp(mount.desktop)}(?![\\w.-])`, 'g');
      rewritten = rewritten.replace(pattern, mount.local);
    }
    return rewritten;
  }

  /** Sandbox paths in a command's output, shown as the desktop paths they stand for. */
  rewriteOutput(text: string): string {
    let rewritten = text;
    for (const mount of this.mounts) rewritten = rewritten.split(mount.local).join(mount.desktop);
    return rewritten;
  }

  /** A desktop path for error messages (sandbox paths shown as their desktop paths). */
  toDesktopText(localPath: string): string {
    return isAbsolute(localPath) ? this.rewriteOutput(localPath) : localPath;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
