// The correct variant, over the same plugin and calls: a 401 joins the one
// refresh in flight (a shared Single) instead of starting its own, a 401 that
// answered a token older than the current one retries without a refresh,
// each call is retried once, and once the server refused the refresh token
// no call refreshes with it again: the session is over until a sign-in.
import Foundation
import MoyaDriverSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

final class TokenAcquisition: @unchecked Sendable {
    let session: MoyaSession
    private let lock = NSLock()
    private var inFlight: Observable<TokenResponse>?
    /// The refusal that ended the session, if the server refused the refresh token.
    private var refused: RefreshRefused?

    init(session: MoyaSession) { self.session = session }

    /// Completes when a token newer than `failed` is there: at once if one
    /// already is, else when the one shared refresh ends.
    func renew(after failed: String) -> Single<Void> {
        lock.withLock {
            if let refused { return .error(refused) }
            if session.tokens.accessToken != failed { return .just(()) }
            if let inFlight { return inFlight.asSingle().map { _ in } }
            let refresh = session.refresh()
                .do(onSuccess: { _ in self.finished(nil) }, onError: { self.finished($0 as? RefreshRefused) })
                .asObservable().share(replay: 1, scope: .forever)
            inFlight = refresh
            return refresh.asSingle().map { _ in }
        }
    }

    private func finished(_ refusal: RefreshRefused?) {
        lock.withLock {
            inFlight = nil
            refused = refusal ?? refused
        }
    }

    /// A new sign-in starts a new session.
    func signedIn() { lock.withLock { refused = nil } }
}

await Driver.run(name: "moya-rx-shared-refresh", version: "15", profiles: ["oauth2"]) { hello in
    let session = MoyaSession(hello: hello)
    let acquisition = TokenAcquisition(session: session)
    let provider = MoyaProvider<APICall>(session: alamofireSession(), plugins: [AccessTokenPlugin { _ in session.tokens.accessToken }])
    return MoyaDriver(session: session, signedIn: { acquisition.signedIn() }) { call in
        provider.rx.request(call).flatMap { response -> Single<Response> in
            guard response.statusCode == 401 else { return .just(response) }
            let sent = response.request?.value(forHTTPHeaderField: "Authorization")?.replacingOccurrences(of: "Bearer ", with: "") ?? ""
            return acquisition.renew(after: sent).flatMap { provider.rx.request(call) }
        }
    }
}
