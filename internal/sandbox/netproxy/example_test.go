package netproxy_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"

	"github.com/tackcode/tack/internal/sandbox/netproxy"
)

func ExampleNewPolicy() {
	p, err := netproxy.NewPolicy(
		[]string{"github.com", "*.githubusercontent.com", "*.npmjs.org"},
		[]string{"gist.githubusercontent.com"})
	if err != nil {
		panic(err)
	}
	for _, host := range []string{"github.com", "api.github.com", "raw.githubusercontent.com", "gist.githubusercontent.com", "REGISTRY.npmjs.org."} {
		fmt.Println(host, p.Allows(host))
	}

	_, err = netproxy.NewPolicy([]string{"example.com:443"}, nil)
	fmt.Println(err)
	// Output:
	// github.com true
	// api.github.com false
	// raw.githubusercontent.com true
	// gist.githubusercontent.com false
	// REGISTRY.npmjs.org. true
	// sandbox.network.allowedDomains: entry "example.com:443": a port is not part of an entry: every port of a listed host is allowed
}

func ExampleProxy_ServeHTTP() {
	policy, _ := netproxy.NewPolicy([]string{"allowed.test"}, nil)
	p := netproxy.New(netproxy.Options{
		Policy: policy,
		OnDenied: func(host string, port int) {
			fmt.Printf("refused %s:%d\n", host, port)
		},
	})
	defer p.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go p.ServeHTTP(context.Background(), l)

	proxyURL, _ := url.Parse("http://" + l.Addr().String())
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	resp, err := client.Get("http://denied.test/")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(resp.Status, "\n", string(body))
	// Output:
	// refused denied.test:80
	// 403 Forbidden
	// tack sandbox: network access to denied.test is not allowed (sandbox.network.allowedDomains)
}
