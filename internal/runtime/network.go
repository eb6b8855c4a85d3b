package runtime

import "github.com/tackcode/tack/internal/llm/transport"

// NetworkSetup is the proxy, certificate authorities and client
// certificate a session started with cfg would send its requests with,
// and the error building its client would give (a file that cannot be
// used), for `tack doctor`.
func NetworkSetup(cfg Config) (transport.Setup, error) {
	pl, err := placeOf(cfg)
	if err != nil {
		return transport.Setup{}, err
	}
	settings, err := readSettings(cfg, pl, optionsEnv(cfg.Env))
	if err != nil {
		return transport.Setup{}, err
	}
	setup := transport.FromEnv(sessionGetenv(cfg, settings))
	return setup, setup.Check()
}
