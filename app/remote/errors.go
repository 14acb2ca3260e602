package remote

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// Kinds of failure. Every error a Client returns wraps one of them, so
// callers test with errors.Is; the message names the host and says what
// to do.
var (
	ErrConnect      = errors.New("could not connect")
	ErrTLS          = errors.New("TLS error")
	ErrAuth         = errors.New("the server refused the API key")
	ErrUnknownModel = errors.New("unknown model")
	ErrRateLimited  = errors.New("rate limited")
	ErrDisconnected = errors.New("the connection closed in the middle of the reply")
	ErrTimeout      = errors.New("the server stopped answering")
	ErrNotOpenAI    = errors.New("not an OpenAI-compatible server")
	ErrServer       = errors.New("the server reported an error")
)

// Error is one failed exchange with a server.
type Error struct {
	Kind   error  // one of the Err* sentinels
	Host   string // host:port, never the URL's user info or the API key
	Status int    // HTTP status; 0 when no response came
	// Detail is the server's own message, or the transport's.
	Detail string
	// RetryAfter is the wait a 429 asked for (0 when it named none).
	RetryAfter time.Duration
	Err        error // the underlying transport error, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	switch e.Kind {
	case ErrConnect:
		fmt.Fprintf(&b, "could not connect to %s", e.Host)
	case ErrTLS:
		fmt.Fprintf(&b, "TLS error talking to %s (is the URL's scheme right, and is the certificate trusted?)", e.Host)
	case ErrAuth:
		fmt.Fprintf(&b, "%s refused the API key (HTTP %d); check the endpoint's key", e.Host, e.Status)
	case ErrUnknownModel:
		fmt.Fprintf(&b, "%s does not serve that model; list its models with /v1/models", e.Host)
	case ErrRateLimited:
		fmt.Fprintf(&b, "%s is rate limiting requests (HTTP 429)", e.Host)
		if e.RetryAfter > 0 {
			fmt.Fprintf(&b, "; retry after %v", e.RetryAfter)
		}
	case ErrDisconnected:
		fmt.Fprintf(&b, "%s closed the connection in the middle of the reply; the partial reply is kept", e.Host)
	case ErrTimeout:
		fmt.Fprintf(&b, "%s stopped answering", e.Host)
	case ErrNotOpenAI:
		fmt.Fprintf(&b, "%s does not look like an OpenAI-compatible server", e.Host)
	default:
		fmt.Fprintf(&b, "%s: %v", e.Host, e.Kind)
		if e.Status != 0 {
			fmt.Fprintf(&b, " (HTTP %d)", e.Status)
		}
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Unwrap gives both the kind and the underlying error to errors.Is/As.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// transportError classifies an error from http.Client.Do or from reading a
// body. cause is the watchdog's reason when it cancelled the request.
func transportError(host string, err, cause error) *Error {
	if cause != nil {
		return &Error{Kind: ErrTimeout, Host: host, Detail: cause.Error(), Err: err}
	}
	var (
		rec     tls.RecordHeaderError
		unknown x509.UnknownAuthorityError
		verify  *tls.CertificateVerificationError
		host509 x509.HostnameError
		inval   x509.CertificateInvalidError
		alert   tls.AlertError
		op      *net.OpError
		dns     *net.DNSError
	)
	switch {
	case errors.As(err, &rec), errors.As(err, &unknown), errors.As(err, &verify),
		errors.As(err, &host509), errors.As(err, &inval), errors.As(err, &alert):
		return &Error{Kind: ErrTLS, Host: host, Detail: innermost(err), Err: err}
	case errors.As(err, &dns):
		return &Error{Kind: ErrConnect, Host: host, Detail: innermost(err), Err: err}
	case errors.As(err, &op) && op.Op == "dial":
		return &Error{Kind: ErrConnect, Host: host, Detail: innermost(err), Err: err}
	case strings.Contains(err.Error(), "tls:"), strings.Contains(err.Error(), "HTTP response to HTTPS client"):
		return &Error{Kind: ErrTLS, Host: host, Detail: innermost(err), Err: err}
	}
	return &Error{Kind: ErrDisconnected, Host: host, Detail: innermost(err), Err: err}
}

// innermost drops the "Post "http://…": " prefixes net/http adds, which
// repeat the URL (and so could repeat user info) without adding meaning.
func innermost(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		if _, ok := err.(*net.OpError); ok {
			return err.Error()
		}
		err = u
	}
}
