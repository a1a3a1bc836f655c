// Package testvectors checks writ's own code paths against published test
// vectors. It reads third-party vectors from ../shared/vectors/external
// beside the repository (RFC 8032, Wycheproof); they are never copied
// into the project, and a missing vector directory fails the tests rather
// than skipping them. Each vector declares its expected result, and writ
// must give exactly that result.
package testvectors
