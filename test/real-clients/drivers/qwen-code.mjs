// Qwen Code: `npm ci` cannot install a lockfile of @qwen-code/qwen-code
// 0.24.4 here: its dependency @teddyzhu/clipboard 0.0.5 lists platform
// packages (darwin, win32, linux-arm64) the registry does not have, so the
// lockfile never holds them and npm ci calls it out of sync.
export default {
  name: 'qwen-code',
  package: '@qwen-code/qwen-code',
  unavailable: "@qwen-code/qwen-code 0.24.4 cannot be installed with npm ci: its @teddyzhu/clipboard 0.0.5 names platform packages the registry does not hold, so no lockfile satisfies npm ci",
};
