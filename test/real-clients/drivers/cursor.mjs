// Cursor: its CLI (cursor-agent) is not on npm; it installs with a script
// from cursor.com, which this harness cannot reach (npm only).
export default {
  name: 'cursor',
  package: 'cursor-agent',
  unavailable: "Cursor's CLI is installed by a script from cursor.com, not from npm, and the harness reaches npm only",
};
