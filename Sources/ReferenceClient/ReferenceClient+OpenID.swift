import Crypto
import DriverProtocol
import Foundation
import JWTKit
import NIOHTTP1

/// What an OpenID Connect client keeps: the provider's discovery document,
/// its keys (fetched again when a token names a `kid` they lack), and who
/// signed in, so a refreshed id token can be held to the same user and issuer.
actor OpenIDSession {
    struct Provider {
        var issuer: String
        var authorizationEndpoint: String
        var tokenEndpoint: String
        var jwksURI: String
    }

    let clientID: String
    let faults: Set<ClientFault>
    private var provider: Provider?
    private var keys: JWTKeyCollection?
    private var knownKeyIDs: Set<String> = []
    /// `iss` and `sub` of the sign-in's id token; nil until one was accepted.
    private(set) var signedIn: (issuer: String, subject: String)?

    init(clientID: String, faults: Set<ClientFault>) {
        self.clientID = clientID
        self.faults = faults
    }

    var isActive: Bool { signedIn != nil }

    func signOut() { signedIn = nil }

    /// Discovery (OIDC Discovery 1.0): the endpoints, from the issuer URL alone.
    func provider(fetch: @Sendable (String) async throws -> Answer) async throws -> Provider {
        if let provider { return provider }
        let answer = try await fetch("/.well-known/openid-configuration")
        guard let document = answer.json, let issuer = document["issuer"] as? String,
            let authorize = document["authorization_endpoint"] as? String, let token = document["token_endpoint"] as? String,
            let jwks = document["jwks_uri"] as? String
        else { throw OpenIDRejection("the discovery document lacks issuer, endpoints or jwks_uri") }
        let found = Provider(issuer: issuer, authorizationEndpoint: authorize, tokenEndpoint: token, jwksURI: jwks)
        provider = found
        return found
    }

    /// Checks an id token: signature against the JWKS, issuer, audience,
    /// expiry (with ten minutes' leeway for clocks), `at_hash`, and the
    /// `nonce` at sign-in; on refresh, the same `iss` and `sub` as at sign-in
    /// (OIDC Core 3.1.3.7 and 12.2). Returns the claims it accepted.
    func validate(
        _ idToken: String, accessToken: String?, nonce: String?, refreshing: Bool, fetch: @Sendable (String) async throws -> Answer
    ) async throws -> [String: JSONValue] {
        let provider = try await provider(fetch: fetch)
        let parts = idToken.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Data(base64URLEncoded: String(parts[0])), let claimsData = Data(base64URLEncoded: String(parts[1])),
            let header = try? JSONDecoder().decode([String: JSONValue].self, from: headerData),
            let claims = try? JSONDecoder().decode([String: JSONValue].self, from: claimsData)
        else { throw OpenIDRejection("the id token is not a JWS") }
        let kid: String? = if case .string(let value) = header["kid"] { value } else { nil }
        if keys == nil || (kid.map { !knownKeyIDs.contains($0) } ?? false) && !faults.contains(.neverRefetchJWKS) {
            try await fetchKeys(provider, fetch: fetch)
        }
        guard let keys else { throw OpenIDRejection("no keys") }
        do {
            _ = try await keys.verify(idToken, as: SignedClaims.self)
        } catch {
            throw OpenIDRejection("its signature does not verify with the provider's keys (kid \(kid ?? "none"))")
        }
        func text(_ name: String) -> String? { if case .string(let value) = claims[name] { value } else { nil } }
        // The bug: a refreshed id token is checked for its signature only, not for whom it names.
        let anyIdentity = refreshing && faults.contains(.acceptAnySubOnRefresh)
        guard anyIdentity || text("iss") == provider.issuer else {
            throw OpenIDRejection("iss \(text("iss") ?? "none") is not the provider's \(provider.issuer)")
        }
        let audience: [String] =
            switch claims["aud"] {
            case .string(let value): [value]
            case .array(let values): values.compactMap { if case .string(let value) = $0 { value } else { nil } }
            default: []
            }
        guard audience.contains(clientID) else { throw OpenIDRejection("aud \(audience) does not name this client") }
        if case .integer(let exp) = claims["exp"], Double(exp) < Date().timeIntervalSince1970 - 600 { throw OpenIDRejection("it expired") }
        if let accessToken, let atHash = text("at_hash") {
            let expected = Data(SHA256.hash(data: Data(accessToken.utf8)).prefix(16)).base64URLEncodedString()
            guard atHash == expected else { throw OpenIDRejection("at_hash does not match the access token") }
        }
        guard let subject = text("sub") else { throw OpenIDRejection("it has no sub") }
        if refreshing {
            if let signedIn, !faults.contains(.acceptAnySubOnRefresh), signedIn.issuer != provider.issuer || signedIn.subject != subject {
                throw OpenIDRejection("the refreshed id token names sub \(subject), the sign-in's was \(signedIn.subject)")
            }
        } else {
            if let nonce, !faults.contains(.ignoreNonce), text("nonce") != nonce {
                throw OpenIDRejection("nonce \(text("nonce") ?? "none") is not the one this client sent")
            }
            signedIn = (provider.issuer, subject)
        }
        return claims
    }

    private func fetchKeys(_ provider: Provider, fetch: @Sendable (String) async throws -> Answer) async throws {
        let answer = try await fetch(provider.jwksURI)
        guard (200..<300).contains(answer.status) else { throw OpenIDRejection("the JWKS answered \(answer.status)") }
        let collection = JWTKeyCollection()
        do {
            try await collection.add(jwksJSON: answer.body)
        } catch {
            throw OpenIDRejection("the JWKS cannot be read: \(error)")
        }
        keys = collection
        knownKeyIDs = Set((answer.json?["keys"] as? [[String: Any]] ?? []).compactMap { $0["kid"] as? String })
    }

    /// jwt-kit checks the signature; the claims are read above.
    struct SignedClaims: JWTPayload {
        func verify(using algorithm: some JWTAlgorithm) async throws {}
        init(from decoder: any Decoder) throws {}
        func encode(to encoder: any Encoder) throws {}
    }
}

struct OpenIDRejection: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension ReferenceClient {
    /// An OpenID Connect sign-in: discovery, the authorization code flow
    /// with PKCE, a `state` and a `nonce` (the mock approves without a page,
    /// for the user named in `login_hint`), then the id token validated
    /// before any token is kept. A refused id token leaves nobody signed in.
    public func loginWithOpenID(username: String) async -> ClientOutcome {
        do {
            let fetch: @Sendable (String) async throws -> Answer = { try await self.send("GET", $0) }
            let provider = try await openID.provider(fetch: fetch)
            let (state, nonce, verifier) = (Self.randomText(), Self.randomText(), Self.randomText() + Self.randomText())
            let challenge = Data(SHA256.hash(data: Data(verifier.utf8))).base64URLEncodedString()
            let redirect = "http://127.0.0.1/callback"
            let query = Self.form([
                ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirect), ("scope", "openid read write"),
                ("state", state), ("nonce", nonce), ("code_challenge", challenge), ("code_challenge_method", "S256"), ("login_hint", username),
            ])
            let approval = try await send("GET", provider.authorizationEndpoint + "?" + query)
            guard let location = approval.headers.first(name: "Location").flatMap(URLComponents.init(string:)),
                location.queryItems?.first(where: { $0.name == "state" })?.value == state,
                let code = location.queryItems?.first(where: { $0.name == "code" })?.value
            else {
                return ClientOutcome(
                    kind: .httpError, status: approval.status, body: approval.body, message: "the authorization request was not approved")
            }
            let answer = try await send(
                "POST", provider.tokenEndpoint, headers: [basic, ("Content-Type", "application/x-www-form-urlencoded")],
                body: Self.form([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect), ("code_verifier", verifier)]))
            let (access, refresh) = Self.tokens(answer)
            guard (200..<300).contains(answer.status), let access, let idToken = answer.json?["id_token"] as? String else {
                return ClientOutcome(kind: .httpError, status: answer.status, body: answer.body, message: "sign-in failed")
            }
            let claims: [String: JSONValue]
            do {
                claims = try await openID.validate(idToken, accessToken: access, nonce: nonce, refreshing: false, fetch: fetch)
            } catch {
                await openID.signOut()
                return ClientOutcome(kind: .reauthRequired, status: answer.status, message: "id token rejected: \(error)")
            }
            await store.signIn(
                access: access, refresh: refresh, lifetime: Self.lifetime(answer), keepCached: faults.contains(.signInKeepsCachedTokens))
            var outcome = ClientOutcome(kind: .ok, status: answer.status)
            outcome.idTokenClaims = claims
            return outcome
        } catch {
            return ClientOutcome(kind: .transportError, message: "\(error)")
        }
    }

    /// A refresh answer's id token, when the sign-in was OpenID Connect: a
    /// reason to refuse the whole answer, or nil.
    func refusedIDToken(_ answer: Answer, access: String) async -> String? {
        guard await openID.isActive, let idToken = answer.json?["id_token"] as? String else { return nil }
        do {
            _ = try await openID.validate(idToken, accessToken: access, nonce: nil, refreshing: true) { try await self.send("GET", $0) }
            return nil
        } catch {
            await openID.signOut()
            return "refreshed id token rejected: \(error)"
        }
    }

    static func randomText() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<24).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).base64URLEncodedString()
    }
}

extension Data {
    /// Base64url without padding (RFC 7515 section 2).
    func base64URLEncodedString() -> String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
            of: "=", with: "")
    }

    init?(base64URLEncoded text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        self.init(base64Encoded: base64)
    }
}
