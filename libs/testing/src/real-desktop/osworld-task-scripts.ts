import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  completed,
  inTerminal,
  pastedInTerminal,
  wait,
  type OsworldTaskScript,
} from './scripted-actions.js';

// Scripted agents for tasks of the port's (phase-1) set; scripted-actions.ts says what they are.
// vs_code has none: the desktop image has no VS Code (Debian packages none), so coverage calls
// every vs_code task ungraded and no test runs one.

/** A browser window: Chrome (Chromium here), or the port's Firefox stand-in for it. */
export const BROWSER = 'chrom|firefox';

const THUNDERBIRD_PROFILE_URL =
  'https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/thunderbird/dd84e895-72fd-4023-a336-97689ded257c/thunderbird-profile.tar.gz';
const THUNDERBIRD_PROFILE = 't5q2a5hp.default-release';
/**
 * Thunderbird's hash of its install directory /usr/lib/thunderbird: a profile made by that
 * Thunderbird names itself its install's default, else Thunderbird makes a new profile and
 * ignores this one.
 */
const THUNDERBIRD_INSTALL_HASH = 'FDC34C9F024745EB';

/** A Thunderbird profile with one identity and no signature, in the shape of the task's tarball. */
async function thunderbirdProfile(): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'thunderbird-profile-'));
  try {
    const profile = join(dir, '.thunderbird', THUNDERBIRD_PROFILE);
    await mkdir(profile, { recursive: true });
    await writeFile(
      join(dir, '.thunderbird', 'profiles.ini'),
      [
        '[Profile0]',
        'Name=default-release',
        'IsRelative=1',
        `Path=${THUNDERBIRD_PROFILE}`,
        'Default=1',
        '',
        '[General]',
        'StartWithLastProfile=1',
        'Version=2',
        '',
        `[Install${THUNDERBIRD_INSTALL_HASH}]`,
        `Default=${THUNDERBIRD_PROFILE}`,
        'Locked=1',
        '',
      ].join('\n'),
    );
    await writeFile(
      join(dir, '.thunderbird', 'installs.ini'),
      [`[${THUNDERBIRD_INSTALL_HASH}]`, `Default=${THUNDERBIRD_PROFILE}`, 'Locked=1', ''].join(
        '\n',
      ),
    );
    await writeFile(
      join(profile, 'prefs.js'),
      [
        'user_pref("mail.account.account1.identities", "id1");',
        'user_pref("mail.account.account1.server", "server1");',
        'user_pref("mail.accountmanager.accounts", "account1");',
        'user_pref("mail.identity.id1.fullName", "Anonym");',
        'user_pref("mail.identity.id1.useremail", "anonym-x2024@outlook.com");',
        'user_pref("mail.server.server1.type", "none");',
        'user_pref("mail.server.server1.hostname", "Local Folders");',
        '',
      ].join('\n'),
    );
    const archive = join(dir, 'thunderbird-profile.tar.gz');
    await promisify(execFile)('tar', ['-czf', archive, '-C', dir, '.thunderbird']);
    return await readFile(archive);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const OSWORLD_TASK_SCRIPTS: readonly OsworldTaskScript[] = [
  {
    taskId: 'e0df059f-28a6-4169-924f-b9623e7184cc',
    domain: 'os',
    about: 'rename the directory set up by sudo',
    right: {
      actions: inTerminal(['mv ~/Desktop/todo_list_Jan_1 ~/Desktop/todo_list_Jan_2']),
      ending: completed('Renamed todo_list_Jan_1 to todo_list_Jan_2.'),
    },
    wrong: {
      actions: inTerminal(['mkdir ~/Desktop/todo_list_Jan_3']),
      ending: completed('Renamed it.'),
    },
  },
  {
    taskId: '48d05431-6cd5-4e76-82eb-12b60d823f7d',
    domain: 'multi_apps',
    about: 'Chrome launched with DevTools, a terminal opened by Ctrl+Alt+T, ~/.bashrc edited',
    right: {
      actions: inTerminal(["echo '# >>> conda initialize >>>' >> ~/.bashrc"], {
        afterWindow: BROWSER,
      }),
      ending: completed('conda is initialised in ~/.bashrc.'),
    },
    wrong: {
      actions: inTerminal(["echo 'export PATH=$HOME/miniconda3/bin:$PATH' >> ~/.bashrc"], {
        afterWindow: BROWSER,
      }),
      ending: completed('conda is on the PATH now.'),
    },
  },
  {
    taskId: '3f28fe4f-5d9d-4994-a456-efd78cfae1a3',
    domain: 'thunderbird',
    about: "Thunderbird's profile set up and launched, its window closed by class, prefs.js read",
    right: {
      actions: pastedInTerminal(
        [
          // pidof, not pgrep: Thunderbird stays a zombie of the VM server, which never reaps what it launches.
          'pkill thunderbird; while pidof thunderbird >/dev/null; do sleep 0.2; done',
          `echo 'user_pref("mail.identity.id1.htmlSigText", "Anonym\\nXYZ Lab");' >> ~/.thunderbird/${THUNDERBIRD_PROFILE}/prefs.js`,
        ],
        { afterWindow: 'thunderbird' },
      ),
      ending: completed('The signature is set.'),
    },
    wrong: {
      // Thunderbird is up, then left as it is: closing it writes prefs.js without a signature.
      actions: [{ ...wait(500), when: "wmctrl -lx | grep -qi 'thunderbird'" }],
      ending: completed('The signature is set.'),
    },
    downloads: async () => ({ [THUNDERBIRD_PROFILE_URL]: await thunderbirdProfile() }),
  },
];
