package agent

import "github.com/tackcode/tack/internal/runtime"

// NetworkCheck is how a session in opts.Cwd would reach the network: one
// line each for the proxy, the certificate authorities and the client
// certificate, only those configured; Err says why the client could not
// be built (a file that cannot be read or parsed, naming its variable).
type NetworkCheck struct {
	Lines []string
	Err   error
}

// CheckNetwork reads the network variables as a session in opts.Cwd
// would (the environment and the settings' env).
func CheckNetwork(opts Options) (NetworkCheck, error) {
	cfg, err := opts.config()
	if err != nil {
		return NetworkCheck{}, err
	}
	setup, err := runtime.NetworkSetup(cfg)
	return NetworkCheck{Lines: setup.Lines(), Err: err}, nil
}
