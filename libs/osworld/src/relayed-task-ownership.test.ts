import { describe, expect, it } from 'vitest';
import { BYTEBOT_PROXY_TOOLS, bytebotChatMessages } from '@benchfleet/testing';
import { RelayedTaskOwnership } from './relayed-task-ownership.js';

// The conversations are built as Bytebot's proxy client builds them (the fake agent's
// `bytebotChatMessages`): the first USER message is `<description> `, each reply's blocks follow.

const INSTRUCTION = 'Open the terminal and list the files';
type Message = Parameters<typeof bytebotChatMessages>[1][number];

const request = (messages: Message[]) => ({
  model: 'm',
  messages: bytebotChatMessages('You are Bytebot.', messages),
  max_tokens: 8192,
  tools: BYTEBOT_PROXY_TOOLS,
});
const first = (description: string): Message => ({
  role: 'USER',
  content: [{ type: 'text', text: `${description} ` }],
});
const step = (id: string, text: string): Message[] => [
  {
    role: 'ASSISTANT',
    content: [
      { type: 'text', text },
      { type: 'tool_use', id, name: 'computer_screenshot', input: {} },
    ],
  },
  {
    role: 'USER',
    content: [
      {
        type: 'tool_result',
        tool_use_id: id,
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'x' } },
        ],
      },
    ],
  },
];

describe("which Bytebot task a relayed call is, by the agent's conversation", () => {
  it('refuses every call before the attempt asks for its task (it is being reset and set up)', async () => {
    const sut = new RelayedTaskOwnership();
    expect(await sut.judge(request([first(INSTRUCTION)]))).toMatch(/does not exist yet/);
  });

  it("takes the task's first call once it is asked for, waiting for the create; refuses another description", async () => {
    const sut = new RelayedTaskOwnership();
    let answer!: (id: string) => void;
    sut.creatingTask(INSTRUCTION, new Promise<string>((resolve) => (answer = resolve)));
    // The agent's first call may come before the create has answered: it waits.
    const early = sut.judge(request([first(INSTRUCTION)]));
    answer('task-1');
    expect(await early).toBeNull();
    expect(await sut.judge(request([first('Order a pizza for the office')]))).toMatch(
      /not the attempt's task description/,
    );
  });

  it('refuses a first call when the create failed, or did not answer in time', async () => {
    const failed = new RelayedTaskOwnership();
    failed.creatingTask(INSTRUCTION, Promise.reject(new Error('HTTP 500')));
    expect(await failed.judge(request([first(INSTRUCTION)]))).toMatch(/was not created/);
    const slow = new RelayedTaskOwnership(50);
    slow.creatingTask(INSTRUCTION, new Promise(() => undefined));
    expect(await slow.judge(request([first(INSTRUCTION)]))).toMatch(/was not created/);
  });

  it("takes a later call whose conversation holds a reply given to the attempt's calls (a tool call id or a text)", async () => {
    const sut = new RelayedTaskOwnership();
    sut.creatingTask(INSTRUCTION, Promise.resolve('task-1'));
    sut.replied({ text: 'Let me look at the screen.', toolCallIds: ['call_abc'] });
    expect(
      await sut.judge(request([first(INSTRUCTION), ...step('call_abc', 'Let me look.')])),
    ).toBeNull();
    // A reply with text only (the agent's tool ids are its own): the text marks it.
    expect(
      await sut.judge(
        request([first(INSTRUCTION), ...step('call_1', 'Let me look at the screen.')]),
      ),
    ).toBeNull();
  });

  it("refuses another task's conversation, even one with the attempt's description (an orphan of an earlier attempt)", async () => {
    const sut = new RelayedTaskOwnership();
    sut.creatingTask(INSTRUCTION, Promise.resolve('task-2'));
    sut.replied({ text: 'Now the terminal.', toolCallIds: ['call_new'] });
    expect(
      await sut.judge(request([first(INSTRUCTION), ...step('call_old', 'An older reply.')])),
    ).toMatch(/another Bytebot task's/);
    expect(await sut.judge({ model: 'm' })).toMatch(/no conversation/);
  });
});
