import AsyncHTTPClient
public import DriverProtocol
import Foundation
import NIOHTTP1

/// What the application sees, independent of the driver protocol's encoding.
public struct ClientOutcome: Sendable {
    /// The driver protocol's outcome kinds: the reference client reports in them directly.
    public typealias Kind = OutcomeKind
    public var kind: Kind
    public var status: Int?
    public var body: String?
    public var message: String?
    /// An OpenID Connect sign-in: the claims of the id token the client accepted.
    public var idTokenClaims: [String: JSONValue]? = nil
}

extension ReferenceClient {
    // MARK: Sign-in

    /// `openID`: sign in as an OpenID Connect client (`loginWithOpenID`).
    public func login(username: String, password: String, openID: Bool = false) async -> ClientOutcome {
        if openID {
            guard dialect == nil else {
                return ClientOutcome(kind: .unsupported, message: "OpenID Connect is served by the oauth2 dialect")
            }
            return await loginWithOpenID(username: username)
        }
        do {
            let answer: Answer
            if let dialect {
                answer = try await declaredSignIn(dialect, username: username, password: password)
            } else {
                answer = try await send(
                    "POST", "/oauth/token", headers: [basic, ("Content-Type", "application/x-www-form-urlencoded")],
                    body: Self.form([("grant_type", "password"), ("username", username), ("password", password)]))
            }
            let (access, refresh) = tokens(answer)
            guard succeeded(answer), let access else {
                return ClientOutcome(kind: .httpError, status: answer.status, body: answer.body, message: "sign-in failed")
            }
            await store.signIn(access: access, refresh: refresh, lifetime: lifetime(answer), keepCached: faults.contains(.signInKeepsCachedTokens))
            return ClientOutcome(kind: .ok, status: answer.status, body: nil)
        } catch {
            return ClientOutcome(kind: .transportError, message: "\(error)")
        }
    }

    /// The app signs the user out: the tokens are forgotten at once, and
    /// where the backend has a sign-out endpoint (a dialect's `sign_out`,
    /// oauth2's RFC 7009 `/oauth/revoke`) the login ends there too, so a
    /// copied token is worth nothing. A refresh still out is left to finish;
    /// its answer is dropped (see `TokenStore.finish`).
    public func logout() async -> ClientOutcome {
        let (access, refresh) = (await store.access, await store.refresh)
        await store.signOut()
        await openID.signOut()
        // The bug: the tokens are forgotten here, and the server never hears of it.
        guard !faults.contains(.signOutLocallyOnly), access != nil || refresh != nil else { return ClientOutcome(kind: .ok) }
        do {
            if let signOut = dialect?.signOut {
                _ = try await declaredSignOut(signOut, access: access, refresh: refresh)
            } else if dialect == nil, let refresh {
                _ = try await send(
                    "POST", "/oauth/revoke", headers: [basic, ("Content-Type", "application/x-www-form-urlencoded")],
                    body: Self.form([("token", refresh), ("token_type_hint", "refresh_token")]))
            }
        } catch {
            // The user is signed out on this device whatever the server said.
        }
        return ClientOutcome(kind: .ok)
    }

    // MARK: Calls

    /// One application call: attach the token, refresh once on the dialect's
    /// "expired" signal, retry once, and say `reauth_required` when the
    /// refresh is refused.
    /// Whether the current call's body came as a one-shot stream. The client
    /// keeps the bytes the app handed over, so every attempt streams them
    /// afresh (the `bodyStream` extension).
    @TaskLocal static var oneShotBody = false

    public func request(
        method: String, path: String, headers: [String: String], body: String?, bodyStream: Bool = false, instance: Int = 1
    ) async -> ClientOutcome {
        let store = await store(forInstance: instance)
        return await Self.$instanceStore.withValue(store) {
            await Self.$oneShotBody.withValue(bodyStream) { await call(method: method, path: path, headers: headers, body: body) }
        }
    }

    private func call(method: String, path: String, headers: [String: String], body: String?) async -> ClientOutcome {
        // The bug: the app's first call after being offline tells it the network
        // is back, and its listener refreshes at once, beside whatever the calls do.
        if faults.contains(.refreshOnReconnect), cameBackOnline() {
            let generation = await store.generation
            Task { _ = await self.refresh(after: generation, triggering: (method, path, headers, body), alone: true) }
        }
        let waitForRefresh = !faults.contains(.sendWithoutTokenDuringRefresh)
        // Proactive refresh: the client's own clock says the token is (nearly) expired.
        if proactive != .off, let due = await store.dueGeneration(joinInFlight: waitForRefresh) {
            let result = await refresh(after: due, triggering: (method, path, headers, body))
            if let served = result.answer { return finish(served, path: path) }
            if case .rejected = result.result { return outcome(for: result.result) }
        }
        let (token, generation, signedOut) = await store.current(waitForRefresh: waitForRefresh)
        if let signedOut { return outcome(for: signedOut) }
        guard token != nil || faults.contains(.sendWithoutTokenDuringRefresh) else {
            return ClientOutcome(kind: .reauthRequired, message: "not signed in")
        }
        do {
            var answer = try await attempt(method, path, headers, body, token: token, retry: false)
            answer = try await honourRetryAfter(answer, method, path, headers, body, token: token)
            var refreshes = 0
            var seen = generation
            while needsRefresh(answer, path: path) {
                let result = await refresh(after: seen, triggering: (method, path, headers, body))
                // The bug: whatever the refresh did, the application gets the 401.
                if faults.contains(.noRetryAfterRefresh), result.answer == nil { return finish(answer, path: path) }
                switch result.result {
                case .refreshed:
                    // Header rotation: the refresh was this very request, answered already.
                    if let served = result.answer { return finish(served, path: path) }
                case .rejected:
                    // The bug: the waiting call goes out once more with the dead token.
                    if faults.contains(.resendAfterRefusedRefresh) { _ = try? await attempt(method, path, headers, body, token: token, retry: true) }
                    return outcome(for: result.result)
                case .unavailable:
                    // The refresh endpoint is down, the session is not over: the
                    // call's own 401 reaches the application (as OkHttp's
                    // Authenticator does when it cannot refresh).
                    return finish(answer, path: path)
                }
                let (newToken, newGeneration, _) = await store.current()
                seen = newGeneration
                answer = try await attempt(method, path, headers, body, token: newToken, retry: true)
                refreshes += 1
                // One refresh and one retry per call; only the broken variant keeps going.
                if !faults.contains(.retryForever) || refreshes >= 25 { break }
            }
            return finish(answer, path: path)
        } catch {
            // A call the app cancelled did not find the network gone.
            if faults.contains(.refreshOnReconnect), !Task.isCancelled { wentOffline() }
            return ClientOutcome(kind: .transportError, message: "\(error)")
        }
    }

    /// What the application gets. A GraphQL answer with `errors` and no
    /// `data` is an error to it, whatever the status (the `graphql` capability).
    private func finish(_ answer: Answer, path: String) -> ClientOutcome {
        let failed = !succeeded(answer) || Self.isGraphQL(path) && answer.graphQLFailed
        return ClientOutcome(kind: failed ? .httpError : .ok, status: answer.status, body: answer.body)
    }

    /// Calls to the GraphQL endpoint, whose answers carry failures in the body.
    static func isGraphQL(_ path: String) -> Bool {
        path.split(separator: "?", maxSplits: 1).first.map { $0.hasSuffix("/graphql") } ?? false
    }

    private func outcome(for result: TokenStore.RefreshResult) -> ClientOutcome {
        switch result {
        case .refreshed: ClientOutcome(kind: .ok)
        case .rejected(let status, let message): ClientOutcome(kind: .reauthRequired, status: status, message: message)
        case .unavailable(let status, let message):
            ClientOutcome(kind: status == nil ? .transportError : .httpError, status: status, message: message)
        }
    }

    /// One attempt of a call with `token`, adopting any access token the answer rotates in.
    func attempt(
        _ method: String, _ path: String, _ appHeaders: [String: String], _ body: String?, token: String?, retry: Bool, bearer override: String? = nil
    ) async throws -> Answer {
        var headers: [(String, String)] = []
        for (name, value) in appHeaders where !(retry && faults.contains(.dropCallHeaderOnRetry) && name.lowercased() == "x-authmock-call") {
            headers.append((name, value))
        }
        if let credential = override ?? token, ownsURL(path) || faults.contains(.bearerToAnyHost) {
            headers.append(("Authorization", faults.contains(.noBearerPrefix) ? credential : "Bearer \(credential)"))
        }
        var sentBody = retry && faults.contains(.dropBodyOnRetry) ? nil : body
        // The bug: the stream the first attempt read is handed over again, and yields nothing.
        if retry, Self.oneShotBody, faults.contains(.reuseConsumedStream), sentBody != nil { sentBody = "" }
        let answer = try await send(method, path, headers: headers, body: sentBody, stream: Self.oneShotBody)
        await adoptRotatedToken(from: answer)
        return answer
    }

    /// The bearer token goes only to this server: relative paths and absolute
    /// URLs on the base URL's origin.
    func ownsURL(_ path: String) -> Bool {
        !path.hasPrefix("http") || path.hasPrefix(baseURL + "/") || path == baseURL
    }

    /// Whether the refresh token rides on resource requests (header rotation).
    var refreshesOnResources: Bool { dialect?.refresh.onResources ?? false }

    /// The response headers a renewed access token may come in: the dialect's,
    /// and `X-Access-Token` (what the `rotation_header` setting is often set to).
    var renewedHeaderNames: [String] {
        let own = dialect?.refresh.renewedHeader.name ?? "Authorization"
        return own.lowercased() == "x-access-token" ? [own] : [own, "X-Access-Token"]
    }

    /// A new access token an answer carries (header rotation), without its scheme.
    func renewedAccessToken(in answer: Answer) -> String? {
        renewedHeaderNames.lazy.compactMap { answer.headers.first(name: $0) }.first.map(Self.withoutBearer)
    }

    /// A header value without a leading `Bearer `.
    static func withoutBearer(_ value: String) -> String {
        value.lowercased().hasPrefix("bearer ") ? String(value.dropFirst(7)) : value
    }

    /// Header rotation: a response may carry a new access token.
    func adoptRotatedToken(from answer: Answer) async {
        guard refreshesOnResources, !faults.contains(.ignoreRotatedHeader) else { return }
        for name in renewedHeaderNames {
            guard let value = answer.headers.first(name: name) else { continue }
            await store.adoptRotated(Self.withoutBearer(value), acceptOlder: faults.contains(.olderHeaderWins))
        }
    }

    /// The dialect's signal that the access token needs refreshing.
    func needsRefresh(_ answer: Answer, path: String) -> Bool {
        // A dialect that answers errors with a 2xx says which by the code alone
        // (a GraphQL answer's own errors, in the body of a 200 too, are read below).
        if let dialect, let key = errorIn2xx(answer) {
            guard ownsURL(path), !faults.contains(.refreshOnlyByExpiry) else { return false }
            if key == "insufficient_scope" { return faults.contains(.refreshOn403) }
            return Self.isExpirySignal(answer, dialect: dialect) || faults.contains(.refreshOnAny401)
        }
        if Self.isGraphQL(path), (200..<300).contains(answer.status) {
            // GraphQL's convention: the token's refusal is in the body of a 200.
            if faults.contains(.statusOnlyGraphQL) { return false }
            if faults.contains(.refreshOnAnyGraphQLError) { return !answer.graphQLErrorCodes.isEmpty }
            return answer.graphQLUnauthenticated && !faults.contains(.refreshOnlyByExpiry)
        }
        // A dialect says which status an expired token gets (docs/dialects.md); oauth2 uses 401.
        let signal = dialect?.expiredAnswer?.status ?? 401
        // A 2xx that is no error of the dialect's is a success, whatever its signal's status.
        if (200..<300).contains(answer.status) { return false }
        if answer.status == 403, signal != 403 { return faults.contains(.refreshOn403) }
        guard answer.status == signal || answer.status == 401 else { return false }
        if faults.contains(.refreshOnlyByExpiry) { return false }
        if faults.contains(.needsErrorBody), answer.body.isEmpty { return false }
        // Another server's 401 is not about our token.
        if !ownsURL(path) { return faults.contains(.refreshOnAny401) }
        if let dialect { return Self.isExpirySignal(answer, dialect: dialect) || faults.contains(.refreshOnAny401) }
        // OAuth 2.0: challenges in other schemes only (Basic) are not ours to
        // refresh; a Bearer challenge anywhere in the header (RFC 9110 allows several) is.
        var schemes = Self.challengeSchemes(answer.headers["WWW-Authenticate"])
        if faults.contains(.firstChallengeOnly) { schemes = Array(schemes.prefix(1)) }
        if !schemes.isEmpty, !schemes.contains("bearer") { return faults.contains(.refreshOnAny401) }
        return true
    }

    /// The auth schemes of `WWW-Authenticate` fields, lowercased, in order
    /// (RFC 9110 section 11.6.1: `Basic realm="a", Bearer error="invalid_token"`).
    /// A comma-separated item starts a new challenge when its first word is a
    /// token not followed by `=` (otherwise it is a parameter).
    static func challengeSchemes(_ fields: [String]) -> [String] {
        var schemes: [String] = []
        for field in fields {
            var items: [String] = []
            var current = "", quoted = false, escaped = false
            for character in field {
                if escaped {
                    escaped = false
                } else if character == "\\" && quoted {
                    escaped = true
                } else if character == "\"" {
                    quoted.toggle()
                } else if character == ",", !quoted {
                    items.append(current)
                    current = ""
                    continue
                }
                current.append(character)
            }
            items.append(current)
            for item in items {
                let trimmed = item.trimmingCharacters(in: .whitespaces)
                guard let word = trimmed.split(separator: " ", maxSplits: 1).first, !word.contains("=") else { continue }
                schemes.append(word.lowercased())
            }
        }
        return schemes
    }

    /// 429/503 with Retry-After: wait (up to a cap) and try once more, without refreshing.
    func honourRetryAfter(
        _ answer: Answer, _ method: String, _ path: String, _ headers: [String: String], _ body: String?, token: String?
    ) async throws -> Answer {
        guard [429, 503].contains(answer.status), let value = answer.headers.first(name: "Retry-After"), let seconds = Double(value) else {
            return answer
        }
        if !faults.contains(.ignoreRetryAfter) {
            try await Task.sleep(for: .milliseconds(Int(min(seconds, Self.retryAfterCap) * 1000)))
        }
        let (current, _, _) = await store.current()
        return try await attempt(method, path, headers, body, token: current ?? token, retry: true)
    }
}
