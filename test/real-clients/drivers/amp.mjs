// Amp: its CLI (@ampcode/cli) reaches its models only through ampcode.com's
// own API (/api/provider/…) behind an Amp login; it has no setting for a
// model API of the user's, so standing in for it means emulating Amp's
// service, which a scripted model server does not do.
export default {
  name: 'amp',
  package: '@ampcode/cli',
  unavailable: "Amp's CLI reaches its models only through ampcode.com's own API behind an Amp login, not through a model API the scripted server stands in for",
};
