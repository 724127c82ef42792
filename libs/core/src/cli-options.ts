import { InvalidArgumentError, Option } from 'commander';
import { errorMessage } from './errors.js';

/** A commander option whose value goes through `parse`; its message becomes commander's one-line error naming the flag and value. */
export function parsedOption(
  flags: string,
  description: string,
  parse?: (text: string) => unknown,
  choices?: readonly string[],
): Option {
  const option = new Option(flags, description);
  if (choices) option.choices(choices);
  if (parse) {
    option.argParser((text: string) => {
      try {
        return parse(text);
      } catch (error) {
        throw new InvalidArgumentError(errorMessage(error));
      }
    });
  }
  return option;
}
