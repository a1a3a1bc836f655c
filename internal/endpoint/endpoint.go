// Package endpoint is writ's one rule for the addresses an issuer's URLs
// may name: package schemas applies it when an issuer record is signed or
// read (Check, on the URL's literal host and port), and package token's
// fetch guard applies it to the URL before fetching (Check) and to every
// address it is about to dial (Classify). So writ never signs a URL its
// own fetch would refuse for its address.
//
// An address is in one of three classes:
//   - Never: link-local (169.254.0.0/16, fe80::/10, where cloud metadata
//     lives), multicast, unspecified, "this network" (0.0.0.0/8) and
//     broadcast (255.255.255.255), and the cloud metadata services
//     that live outside link-local (AWS's IPv6 fd00:ec2::254, Alibaba's
//     100.100.100.200). Never dialled, recorded or not; a record naming
//     one is refused.
//   - Internal: loopback, private (RFC 1918, fc00::/7), shared
//     (100.64.0.0/10) and site-local (fec0::/10). Dialled only for the
//     exact jwks_uri of a root-signed, unrevoked issuer record: the
//     record is the operator's opt-in, so a record may name one.
//   - Public: everything else.
//
// An IPv4-mapped, IPv4-compatible, SIIT, NAT64 (64:ff9b::/96,
// 64:ff9b:1::/48) or 6to4 (2002::/16) address is judged by the IPv4
// address it carries, which is where the connection really goes.
//
// A host name is not judged here: what it resolves to is known only when
// it is dialled, so the fetch guard judges the resolved address then
// (Classify), and a record may name any host name.
//
// This package does no I/O and imports nothing of writ's.
package endpoint

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Class is what the fetch guard does with an address.
type Class int

// The classes of address, see the package doc.
const (
	Public   Class = iota // dialled
	Internal              // dialled only for a recorded jwks_uri
	Never                 // never dialled, never recorded
)

// Errors Check returns, wrapped with the address or port; ErrNever is
// also what the fetch guard refuses a dialled address with.
var (
	ErrNever = errors.New("address-never: link-local, multicast, unspecified, broadcast and cloud metadata addresses are never dialled")
	ErrPort  = errors.New("port: an explicit port must be 1 to 65535 (or left out with its colon)")
)

// Classify returns a's class and the address it was judged by: a itself,
// or the IPv4 address a carries (see the package doc). A zone does not
// change the class.
func Classify(a netip.Addr) (Class, netip.Addr) {
	a = embedded(a.Unmap()) // ::ffff:127.0.0.1 is 127.0.0.1
	switch {
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsMulticast() || a.IsInterfaceLocalMulticast() || a.IsUnspecified() ||
		(a.Is4() && (a.As4()[0] == 0 || a == broadcast)) || metadata[a.WithZone("")]:
		return Never, a
	case a.IsLoopback() || a.IsPrivate() || shared.Contains(a) || siteLocal.Contains(a):
		return Internal, a
	}
	return Public, a
}

// Check applies the rule to a parsed URL's authority: an explicit port
// is 1 to 65535 (an empty one, "host:", is refused), and a literal IP
// address host is not of class Never. A host name passes: it is judged
// when dialled. Errors wrap ErrPort or ErrNever. Check does not look at
// the scheme, user info, path or anything else of u.
func Check(u *url.URL) error {
	if port, ok := explicitPort(u.Host); ok {
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return fmt.Errorf("%w: %q", ErrPort, port)
		}
	}
	a, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return nil // a host name (or nothing): judged at dial time
	}
	if c, judged := Classify(a); c == Never {
		return fmt.Errorf("%w: %s", ErrNever, judged)
	}
	return nil
}

// explicitPort returns the port written after the host's last colon
// outside IPv6 brackets, and whether there is such a colon.
func explicitPort(host string) (string, bool) {
	i := strings.LastIndexByte(host, ':')
	if i < 0 || strings.IndexByte(host[i:], ']') >= 0 {
		return "", false
	}
	return host[i+1:], true
}

// embedded returns the IPv4 address an IPv6 address carries to a
// translator (NAT64, RFC 6052 64:ff9b::/96 and RFC 8215 64:ff9b:1::/48;
// 6to4, RFC 3056 2002::/16; IPv4-compatible and SIIT), which is where the
// connection really goes; else a itself.
func embedded(a netip.Addr) netip.Addr {
	if !a.Is6() || a.IsLoopback() || a.IsUnspecified() { // ::1 and :: are themselves
		return a
	}
	b := a.As16()
	switch {
	case nat64.Contains(a) || nat64Local.Contains(a) || compat.Contains(a) || siit.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	return a
}

// metadata holds the cloud metadata addresses outside link-local: a
// credential service must never be an issuer's key source.
var metadata = map[netip.Addr]bool{
	netip.MustParseAddr("fd00:ec2::254"):   true, // AWS IMDS over IPv6
	netip.MustParseAddr("100.100.100.200"): true, // Alibaba Cloud metadata
}

var (
	broadcast  = netip.AddrFrom4([4]byte{255, 255, 255, 255})
	compat     = netip.MustParsePrefix("::/96")           // IPv4-compatible, RFC 4291 §2.5.5.1
	siit       = netip.MustParsePrefix("::ffff:0:0:0/96") // SIIT, RFC 2765
	siteLocal  = netip.MustParsePrefix("fec0::/10")       // deprecated site-local, RFC 3879
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	shared     = netip.MustParsePrefix("100.64.0.0/10") // RFC 6598's carrier-grade NAT, internal to a provider
)

// IsLoopbackHost reports whether a URL's host (without its port) is
// "localhost" or a loopback address (127.0.0.0/8, ::1): where writ's
// clients and servers allow plain http://.
func IsLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}
