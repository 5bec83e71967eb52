/** The recovery schedule as pure arithmetic, so it can be tested without a server (one copy, in the contract). */
export { pollOffsetSeconds } from '../contract/definitions';
