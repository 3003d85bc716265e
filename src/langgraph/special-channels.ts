// LangGraph's special write channels (errors, interrupts, resumes, scheduled tasks), which it numbers with negative
// indexes; looked up by own key, so that a channel named like an Object.prototype member (`toString`) is a plain one.
import { WRITES_IDX_MAP } from "@langchain/langgraph-checkpoint";

/** Whether `channel` is one of LangGraph's special write channels. */
export const isSpecialChannel = (channel: string): boolean => Object.hasOwn(WRITES_IDX_MAP, channel);

/** The fixed index of a special channel's write, or undefined for a plain channel. */
export const specialIndex = (channel: string): number | undefined => (isSpecialChannel(channel) ? WRITES_IDX_MAP[channel] : undefined);
