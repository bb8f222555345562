import { clientReplay } from "./client-replay.ts";

clientReplay("node");
