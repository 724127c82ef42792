import { echoEntry } from '@benchfleet/echo-benchmark/entry';
import { osworldEntry } from '@benchfleet/osworld/entry';
import { webshopEntry } from '@benchfleet/webshop-benchmark/entry';

/**
 * The benchmarks this fleet runs: registering one is a line here (see README, "Adding a
 * benchmark"). Light: each entry loads its descriptor only when a command needs it.
 */
export const benchmarkEntries = [osworldEntry, webshopEntry, echoEntry];
