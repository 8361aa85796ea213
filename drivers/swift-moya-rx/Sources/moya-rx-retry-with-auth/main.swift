// Recipe 2: AccessTokenPlugin adds the token; retryWithAuthIfNeeded, the
// RxSwift operator posts write for Moya, turns a 401 into an error and
// retry(when:) answers each such error with a refresh, then subscribes to
// the request again (three times at most). Each failed call refreshes for
// itself: no single flight, and no check whether the 401 answered the token
// that is current now.
import Foundation
import MoyaDriverSupport

extension PrimitiveSequence where Trait == SingleTrait, Element == Response {
    func retryWithAuthIfNeeded(_ session: MoyaSession) -> Single<Response> {
        flatMap { response -> Single<Response> in
            response.statusCode == 401 ? .error(Unauthorized(response)) : .just(response)
        }
        .retry { (errors: Observable<any Error>) in
            errors.enumerated().flatMap { attempt, error -> Observable<TokenResponse> in
                guard error is Unauthorized, attempt < 3 else { return .error(error) }
                return session.refresh().asObservable()
            }
        }
    }
}

await Driver.run(name: "moya-rx-retry-with-auth", version: "15", profiles: ["oauth2"]) { hello in
    let session = MoyaSession(hello: hello)
    let provider = MoyaProvider<APICall>(session: alamofireSession(), plugins: [AccessTokenPlugin { _ in session.tokens.accessToken }])
    return MoyaDriver(session: session) { provider.rx.request($0).retryWithAuthIfNeeded(session) }
}
