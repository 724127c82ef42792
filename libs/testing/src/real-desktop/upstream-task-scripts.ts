import type { ScriptedComputerAction } from '../fake-bytebot/fake-bytebot-scenarios.js';
import { docxOf, xlsxOf } from './office-files.js';
import { BROWSER } from './osworld-task-scripts.js';
import {
  activeWindowIs,
  completed,
  dismissDialog,
  pastedInTerminal,
  keys,
  killAndWait,
  wait,
  windowShown,
  type OsworldTaskScript,
} from './scripted-actions.js';

// Scripted agents for tasks outside the port's (phase-1) set, graded by OSWorld's own evaluators in
// the grader image (deploy/grader): a run of these needs a worker with --grader-url.
// scripted-actions.ts says what a script is.

/**
 * LibreOffice's user settings holding one value (what Tools > Options writes), as a shell line.
 */
function libreOfficeSetting(item: string, prop: string, value: string): string {
  const xcu =
    '<oor:items xmlns:oor="http://openoffice.org/2001/registry">' +
    `<item oor:path="${item}"><prop oor:name="${prop}"><value>${value}</value></prop></item></oor:items>`;
  return `d=~/.config/libreoffice/4/user; mkdir -p $d; echo '${xcu}' > $d/registrymodifications.xcu`;
}

const autosaveSettings = (minutes: number) =>
  libreOfficeSetting(
    '/org.openoffice.Office.Common/Save/Document',
    'AutoSaveTimeIntervall',
    String(minutes),
  );

const defaultFontSettings = (font: string) =>
  libreOfficeSetting('/org.openoffice.Office.Writer/DefaultFont', 'Standard', font);

/** LibreOffice's window, as `wmctrl -lx` lists it. */
const LIBREOFFICE = 'libreoffice|soffice';

/**
 * Once LibreOffice (which the setup starts, slowly on a busy machine) is on the screen with the
 * dialog a fresh profile opens over it (Impress: its template chooser; Writer and Calc: the tip of
 * the day) closed, a terminal, LibreOffice closed (so that it neither takes the focus back nor
 * writes its settings over the agent's), then the settings written.
 */
function libreOfficeSettingFromTerminal(
  dialog: string,
  settings: string,
): ScriptedComputerAction[] {
  return [
    ...dismissDialog(LIBREOFFICE, dialog),
    ...pastedInTerminal([killAndWait('soffice.bin'), settings], {
      afterWindow: LIBREOFFICE,
    }),
  ];
}

/** Impress's start dialog: on a fresh profile it opens over the document and takes the focus. */
const TEMPLATE_DIALOG = 'Select a Template';
/** What Writer and Calc open over a document on a fresh profile. */
const TIP_OF_THE_DAY = 'Tip of the Day';

const SEALAND_DOCX =
  'https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/libreoffice_writer/f178a4a9-d090-4b56-bc4c-4b72a61a035d/loa-one-time-submission-sealand.docx';

const HOURS_XLSX =
  'https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/libreoffice_calc/357ef137-7eeb-4c80-a3bb-0951f26a8aff/Multiply_Time_Number.xlsx';
const HOURS_WINDOW = 'Multiply_Time_Number.xlsx - LibreOffice Calc';

/**
 * In Calc, once its tip is closed: E3 chosen in the Name Box (Ctrl+Shift+F5), this formula typed
 * into it, the file saved (Ctrl+S) in its own format (Enter on "Keep current format").
 */
function formulaInCalc(formula: string): ScriptedComputerAction[] {
  const inCalc = activeWindowIs(HOURS_WINDOW);
  return [
    ...dismissDialog(LIBREOFFICE, TIP_OF_THE_DAY),
    keys(['Control_L', 'Shift_L', 'F5'], inCalc),
    { name: 'computer_type_text', input: { text: 'E3\n' }, text: 'Going to E3.', when: inCalc },
    {
      name: 'computer_type_text',
      input: { text: `${formula}\n` },
      text: `Typing ${formula}.`,
      when: inCalc,
    },
    keys(['Control_L', 's'], inCalc),
    { ...keys(['Return'], activeWindowIs('Confirm File Format')), text: 'Keeping the format.' },
    { ...wait(500), when: `! ${windowShown('Confirm File Format')} && ${inCalc}` },
  ];
}

/** Chrome's preferences with Do Not Track on or off (what its settings page writes), the browser closed first. */
const doNotTrack = (on: boolean) =>
  `cd ~/.config/google-chrome/Default && jq -c '.enable_do_not_track=${on}' Preferences >p && mv p Preferences`;

/** VLC's first start asks about network access: closed with Escape if it shows, as an agent would. */
const VLC_PRIVACY = 'Privacy and Network Access Policy';
function afterVlc(lines: readonly string[]): ScriptedComputerAction[] {
  return [
    { ...wait(500), when: "wmctrl -lx | grep -qi 'vlc'" },
    {
      name: 'computer_type_keys',
      input: { keys: ['Escape'] },
      text: 'Closing the privacy dialog.',
      when:
        `xdotool getactivewindow getwindowname | grep -qF ${JSON.stringify(VLC_PRIVACY)} || ` +
        `! wmctrl -l | grep -qF ${JSON.stringify(VLC_PRIVACY)}`,
    },
    { ...wait(500), when: `! wmctrl -l | grep -qF ${JSON.stringify(VLC_PRIVACY)}` },
    ...pastedInTerminal(['pkill vlc; while pidof vlc >/dev/null; do sleep 0.2; done', ...lines], {
      afterWindow: 'vlc',
    }),
  ];
}

/** GIMP's main window (its splash comes first), GIMP closed, then a line of its gimprc appended. */
function afterGimp(gimprcLine: string): ScriptedComputerAction[] {
  return [
    { ...wait(500), when: "wmctrl -l | grep -qF 'GNU Image Manipulation Program'" },
    ...pastedInTerminal(
      [
        'pkill -f gimp-2; while pgrep -f gimp-2 >/dev/null; do sleep 0.2; done',
        `mkdir -p ~/.config/GIMP/2.10 && echo '${gimprcLine}' >> ~/.config/GIMP/2.10/gimprc`,
      ],
      { afterWindow: 'gimp' },
    ),
  ];
}

/** Tasks outside the port's (phase-1) set: a run of these needs a worker with --grader-url. */
export const UPSTREAM_GRADED_TASK_SCRIPTS: readonly OsworldTaskScript[] = [
  {
    taskId: '2cd43775-7085-45d8-89fa-9e35c0a915cf',
    domain: 'libreoffice_impress',
    about: "Impress launched by the setup, LibreOffice's autosave interval in its user settings",
    right: {
      actions: libreOfficeSettingFromTerminal(TEMPLATE_DIALOG, autosaveSettings(3)),
      ending: completed('Autosave runs every 3 minutes.'),
    },
    wrong: {
      actions: libreOfficeSettingFromTerminal(TEMPLATE_DIALOG, autosaveSettings(10)),
      ending: completed('Autosave is on.'),
    },
  },
  {
    taskId: '7b7617bd-57cc-468e-9c91-40c4ec2bcb3d',
    domain: 'gimp',
    about: "GIMP launched by the setup, quit by postconfig's Ctrl+Q, its gimprc read",
    right: {
      actions: afterGimp('(undo-levels 100)'),
      ending: completed('GIMP keeps at least 100 undo steps.'),
    },
    wrong: {
      actions: afterGimp('(undo-levels 50)'),
      ending: completed('Undo steps are set.'),
    },
  },
  {
    taskId: '215dfd39-f493-4bc3-a027-8a97d72c61bf',
    domain: 'vlc',
    about:
      'VLC launched by a shell command and clicked by pyautogui, restarted by postconfig, vlcrc read',
    right: {
      actions: afterVlc(["mkdir -p ~/.config/vlc && echo 'qt-bgcone=0' >> ~/.config/vlc/vlcrc"]),
      ending: completed('The cone is off.'),
    },
    wrong: {
      actions: afterVlc(["mkdir -p ~/.config/vlc && echo 'qt-bgcone=1' >> ~/.config/vlc/vlcrc"]),
      ending: completed('The cone is off.'),
    },
  },
  {
    taskId: '030eeff7-b492-4218-b312-701ec99ee0cc',
    domain: 'chrome',
    about: 'Chrome launched with DevTools and socat, restarted by postconfig, its Preferences read',
    right: {
      actions: pastedInTerminal(
        [`pkill -f firefox; ${killAndWait('chromium')}`, doNotTrack(true)],
        {
          afterWindow: BROWSER,
        },
      ),
      ending: completed('Do Not Track is on.'),
    },
    wrong: {
      actions: pastedInTerminal(
        [`pkill -f firefox; ${killAndWait('chromium')}`, doNotTrack(false)],
        {
          afterWindow: BROWSER,
        },
      ),
      ending: completed('Do Not Track is on.'),
    },
  },
  {
    taskId: 'f178a4a9-d090-4b56-bc4c-4b72a61a035d',
    domain: 'libreoffice_writer',
    about:
      "A .docx opened in Writer by the setup, Writer's default font in LibreOffice's user settings",
    right: {
      actions: libreOfficeSettingFromTerminal(
        TIP_OF_THE_DAY,
        defaultFontSettings('Times New Roman'),
      ),
      ending: completed('Times New Roman is the default font.'),
    },
    wrong: {
      actions: libreOfficeSettingFromTerminal(
        TIP_OF_THE_DAY,
        defaultFontSettings('Liberation Serif'),
      ),
      ending: completed('The default font is set.'),
    },
    downloads: async () => ({
      [SEALAND_DOCX]: docxOf([
        'Letter of Authority',
        'One-time submission, Principality of Sealand.',
      ]),
    }),
  },
  {
    taskId: '357ef137-7eeb-4c80-a3bb-0951f26a8aff',
    domain: 'libreoffice_calc',
    about:
      'An .xlsx opened in Calc by the setup, a formula typed into a cell, saved as .xlsx, checked by compare_table',
    right: {
      actions: formulaInCalc('=C3*24*D3'),
      ending: completed('E3 holds the hours times the rate: 191.67.'),
    },
    wrong: {
      // The product the task says is wrong: a time multiplied as a fraction of a day.
      actions: formulaInCalc('=C3*D3'),
      ending: completed('E3 holds the product.'),
    },
    downloads: async () => ({
      // 7:40 worked (a time: 7h40 / 24 h), at 25 an hour: 191.67 earned.
      [HOURS_XLSX]: xlsxOf([
        [],
        [null, 'Week', 'Total hours', 'Hourly rate', 'Total earned'],
        [null, 'Week 1', 7 / 24 + 40 / 1440, 25, null],
      ]),
    }),
  },
];
