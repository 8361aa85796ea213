// Recipe 2: a hand-written RequestInterceptor, as blog posts and answers
// write it (the OAuth2Handler of Alamofire 4's README, carried to Alamofire
// 5's adapt/retry): adapt() adds the current token; retry() on a 401 queues
// the completion, starts one refresh if none is running, and when it ends
// retries (or fails) every queued request. Written as those posts write it,
// including what they leave out: no retry limit, and no check whether the
// failed request carried the token that is current now.
import AlamofireDriverSupport
import Foundation

final class OAuth2Handler: RequestInterceptor, @unchecked Sendable {
    private let lock = NSLock()
    private var accessToken = ""
    private var refreshToken = ""
    private var isRefreshing = false
    private var requestsToRetry: [@Sendable (RetryResult) -> Void] = []
    var grant: (@Sendable ([String: String]) async -> Result<TokenResponse, any Error>)?

    func signedIn(_ tokens: TokenResponse) {
        lock.withLock {
            accessToken = tokens.access_token
            refreshToken = tokens.refresh_token ?? refreshToken
        }
    }

    func adapt(_ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        var urlRequest = urlRequest
        urlRequest.headers.add(.authorization(bearerToken: lock.withLock { accessToken }))
        completion(.success(urlRequest))
    }

    func retry(_ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void) {
        guard request.response?.statusCode == 401 else { return completion(.doNotRetryWithError(error)) }
        lock.lock()
        defer { lock.unlock() }
        requestsToRetry.append(completion)
        guard !isRefreshing else { return }
        isRefreshing = true
        let (grant, refresh) = (grant!, refreshToken)
        Task {
            let result = await grant(["grant_type": "refresh_token", "refresh_token": refresh])
            let waiting = lock.withLock {
                if case .success(let tokens) = result {
                    accessToken = tokens.access_token
                    refreshToken = tokens.refresh_token ?? refreshToken
                }
                isRefreshing = false
                defer { requestsToRetry.removeAll() }
                return requestsToRetry
            }
            for completion in waiting {
                switch result {
                case .success: completion(.retry)
                case .failure(let error): completion(.doNotRetryWithError(error))
                }
            }
        }
    }
}

await Driver.run(name: "alamofire-request-interceptor", version: "5", profiles: ["oauth2"], capabilities: ["url"]) { hello in
    let handler = OAuth2Handler()
    let driver = AlamofireDriver(hello: hello, interceptor: handler) { handler.signedIn($0) }
    handler.grant = { await driver.grant($0) }
    return driver
}
