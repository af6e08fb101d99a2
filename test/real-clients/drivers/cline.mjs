// Cline: @cline/cli-linux-x64 3.0.65 installs (the `cline` wrapper's
// lockfile cannot satisfy npm ci: platform packages never published), but
// driven with an openai-compatible provider at the scripted server it sent
// no request in 60 s, and it leaves a detached `--cline-hub-daemon` behind
// that a process-group kill does not reach. Not driven until that is solved.
export default {
  name: 'cline',
  package: '@cline/cli-linux-x64',
  unavailable: 'the Cline CLI 3.0.65 sent no request to a loopback openai-compatible provider within 60 s and leaves a detached hub daemon behind',
};
