// The same chain over a token manager that does what the recipe leaves out:
// one refresh in flight that every refused operation joins, no refresh for a
// request that carried a token already replaced, and no refresh with a
// refresh token the server has refused.
import ApolloDriverSupport
import Foundation

final class SharedRefreshTokenManager: TokenManager, @unchecked Sendable {
    let tokens: TokenStore
    private let lock = NSLock()
    private var waiting: [@Sendable (Result<Void, any Error>) -> Void]?
    private var refused: RefreshRefused?

    init(tokens: TokenStore) { self.tokens = tokens }

    func renew(after token: String, done: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        enum Next { case answer(Result<Void, any Error>), joined, start }
        let next: Next = lock.withLock {
            if let refused { return .answer(.failure(refused)) }
            if tokens.accessToken != token { return .answer(.success(())) }
            if waiting != nil {
                waiting!.append(done)
                return .joined
            }
            waiting = [done]
            return .start
        }
        switch next {
        case .answer(let result): return done(result)
        case .joined: return
        case .start: break
        }
        let store = tokens
        Task {
            let result: Result<Void, any Error>
            do {
                try await store.grant(["grant_type": "refresh_token", "refresh_token": store.refreshToken])
                result = .success(())
            } catch {
                result = .failure(error)
            }
            let callers = lock.withLock {
                if case .failure(let error as RefreshRefused) = result { refused = error }
                defer { waiting = nil }
                return waiting ?? []
            }
            for caller in callers { caller(result) }
        }
    }

    func signedIn() { lock.withLock { refused = nil } }
}

await Driver.run(name: "apollo-shared-refresh", version: "1", profiles: ["oauth2"], capabilities: ["graphql"]) { hello in
    ApolloDriver(hello: hello, manager: SharedRefreshTokenManager(tokens: TokenStore(hello: hello)))
}
