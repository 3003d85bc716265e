// The AI SDK's own chat client (AbstractChat, as useChat uses it) over DefaultChatTransport, its fetch answered by an
// in-process route handler: the "chatbot message persistence" flow end to end, without a network.
import { AbstractChat, DefaultChatTransport, type ChatInit, type ChatState, type ChatStatus, type UIMessage } from "ai";

/** The plain-array ChatState a framework binding (React's, Vue's) keeps in its own reactive store. */
class ArrayState<M extends UIMessage> implements ChatState<M> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  constructor(public messages: M[] = []) {}
  pushMessage = (m: M) => void (this.messages = [...this.messages, m]);
  popMessage = () => void (this.messages = this.messages.slice(0, -1));
  replaceMessage = (i: number, m: M) => void (this.messages = [...this.messages.slice(0, i), m, ...this.messages.slice(i + 1)]);
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

export class TestChat<M extends UIMessage = UIMessage> extends AbstractChat<M> {
  constructor(init: Omit<ChatInit<M>, "transport"> & { route: (req: Request) => Promise<Response> }) {
    const { route, messages, ...rest } = init;
    super({
      ...rest,
      state: new ArrayState<M>(messages ?? []),
      transport: new DefaultChatTransport<M>({
        api: "http://app.test/api/chat",
        fetch: async (input, reqInit) => route(new Request(input, reqInit)),
      }),
    });
  }
}
