// The seed's recipe: Apollo iOS 1.x's default interceptor chain with a token
// interceptor, a 401 check and an in-body UNAUTHENTICATED check that renew
// the token and `chain.retry` the operation (ApolloDriverSupport's
// TokenInterceptorProvider), over a token manager that renews once per
// caller: every refused operation sends its own refresh, and nothing checks
// whether the refused request carried the token that is current now.
import ApolloDriverSupport
import Foundation

final class RenewingTokenManager: TokenManager {
    let tokens: TokenStore
    init(tokens: TokenStore) { self.tokens = tokens }

    func renew(after token: String, done: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        let tokens = tokens
        Task {
            do {
                try await tokens.grant(["grant_type": "refresh_token", "refresh_token": tokens.refreshToken])
                done(.success(()))
            } catch {
                done(.failure(error))
            }
        }
    }

    func signedIn() {}
}

await Driver.run(name: "apollo-token-interceptor", version: "1", profiles: ["oauth2"], capabilities: ["graphql"]) { hello in
    ApolloDriver(hello: hello, manager: RenewingTokenManager(tokens: TokenStore(hello: hello)))
}
