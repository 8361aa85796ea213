// The same chain over a token manager that does what the recipe leaves out:
// one refresh in flight that every refused operation joins, no refresh for a
// request that carried a token already replaced, and no refresh with a
// refresh token the server has refused.
import Apollo2DriverSupport

actor SharedRefreshTokenManager: TokenManager {
    nonisolated let tokens: TokenStore
    private var inFlight: Task<Void, any Error>?
    private var refused: RefreshRefused?

    init(tokens: TokenStore) { self.tokens = tokens }

    func renew(after token: String) async throws {
        if let refused { throw refused }
        if tokens.accessToken != token { return }
        if let inFlight { return try await inFlight.value }
        let store = tokens
        let refresh = Task { try await store.grant(["grant_type": "refresh_token", "refresh_token": store.refreshToken]) }
        inFlight = refresh
        defer { inFlight = nil }
        do {
            try await refresh.value
        } catch let error as RefreshRefused {
            refused = error
            throw error
        }
    }

    func signedIn() async { refused = nil }
}

await Driver.run(name: "apollo2-shared-refresh", version: "2", profiles: ["oauth2"], capabilities: ["graphql"]) { hello in
    ApolloDriver(hello: hello, manager: SharedRefreshTokenManager(tokens: TokenStore(hello: hello)))
}
