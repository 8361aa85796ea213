import Foundation
import TestSupport
import Testing

/// An OpenID Connect client configured with only the issuer URL (Authlib's,
/// from PyPI) against the real binary: discovery, code flow with PKCE and
/// nonce, id tokens validated against the JWKS by Authlib and again by
/// joserfc, a key rotation between sign-in and refresh that the client
/// follows by refetching the JWKS.
struct OpenIDClientTests {
    static let client = repositoryRoot.appendingPathComponent("Tests/EndToEndTests/Fixtures/oidc-client.py").path

    @Test(arguments: ["RS256", "ES256"])
    func anIssuerURLIsAllAnOIDCClientNeeds(_ algorithm: String) async throws {
        let server = try ServingBinary(["--signing-alg", algorithm, "--log-level", "error"])
        defer { _ = server.interrupt() }
        #expect(server.banner.contains("access tokens: \(algorithm)"))
        let run = try await runProcess("/usr/bin/env", ["python3", Self.client, server.baseURL, "--rotate"])
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
        #expect(result["sub"] as? String == "alice" && result["email"] as? String == "alice@example.com")
        #expect(result["alg"] as? String == algorithm)
        #expect(result["nonce"] is String && result["refreshedNonce"] is NSNull)
        let kids = try #require(result["kids"] as? [String])
        #expect(kids.count == 2 && kids[0] != kids[1], "the refreshed id token is signed by the rotated-in key: \(kids)")
    }
}
