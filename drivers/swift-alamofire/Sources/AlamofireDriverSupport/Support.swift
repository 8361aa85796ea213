@_exported import Alamofire
@_exported import DriverKit
import Foundation

/// A token endpoint answer (RFC 6749 section 5.1).
public struct TokenResponse: Decodable, Sendable {
    public var access_token: String
    public var refresh_token: String?
    public var expires_in: Double?
}

/// A grant at the token endpoint failed (the refresh's error, as the recipe passes it on).
public struct GrantFailed: Error, CustomStringConvertible {
    public let error: AFError
    public var description: String { "the token endpoint: \(error)" }
}

/// The URLSession's delegate: Alamofire's own `SessionDelegate` for every
/// event, but two answers where swift-corelibs-foundation differs from
/// Apple's Foundation, so that Alamofire runs unmodified on Linux. A proxy,
/// not a subclass: SessionDelegate declares these methods in extensions,
/// which Swift on Linux cannot override. On macOS neither answer changes
/// anything the recipes meet.
final class CorelibsSafeDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let alamofire: SessionDelegate
    init(_ alamofire: SessionDelegate) { self.alamofire = alamofire }

    // corelibs asks for a new body stream when a connection is reset, off the
    // session's queue, and Alamofire's lookup of the upload there traps. The
    // driver sends every body as data, never as a stream: there is none to give.
    func urlSession(_ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping (InputStream?) -> Void) {
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if !canImport(Darwin)
            // corelibs never completes a task whose Basic challenge gets default
            // handling (case 5.2 hung). The driver holds no HTTP credential, so it
            // rejects the challenge: on Linux such a 401 ends as a cancelled task.
            switch challenge.protectionSpace.authenticationMethod {
            case NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest, NSURLAuthenticationMethodNTLM,
                NSURLAuthenticationMethodNegotiate:
                return completionHandler(.rejectProtectionSpace, nil)
            default: break
            }
        #endif
        alamofire.urlSession(session, task: task, didReceive: challenge, completionHandler: completionHandler)
    }

    // Everything else is Alamofire's.
    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        alamofire.urlSession(session, didBecomeInvalidWithError: error)
    }
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        alamofire.urlSession(
            session, task: task, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent, totalBytesExpectedToSend: totalBytesExpectedToSend)
    }
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        alamofire.urlSession(session, task: task, willPerformHTTPRedirection: response, newRequest: request, completionHandler: completionHandler)
    }
    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        alamofire.urlSession(session, task: task, didFinishCollecting: metrics)
    }
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        alamofire.urlSession(session, task: task, didCompleteWithError: error)
    }
    func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask) {
        alamofire.urlSession(session, taskIsWaitingForConnectivity: task)
    }
    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        alamofire.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
    }
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        alamofire.urlSession(session, dataTask: dataTask, didReceive: data)
    }
    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
        completionHandler: @escaping (CachedURLResponse?) -> Void
    ) {
        alamofire.urlSession(session, dataTask: dataTask, willCacheResponse: proposedResponse, completionHandler: completionHandler)
    }
}

/// Runs before the recipe's retrier and never decides a retry. Alamofire's
/// `Request.reset()` sets the progress totals back to 0 before each retry,
/// and corelibs' `Progress` traps on a total taken from N to 0 (a fraction
/// over 0): every retry crashed the driver. An indeterminate total (-1)
/// first is accepted by both Foundations.
public struct ProgressTotalsReset: RequestRetrier {
    public init() {}

    public func retry(
        _ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        request.uploadProgress.totalUnitCount = -1
        request.downloadProgress.totalUnitCount = -1
        completion(.doNotRetry)
    }
}

/// The driver's session: unmodified Alamofire behind `CorelibsSafeDelegate`,
/// built as `Session()` builds its own (a serial root queue that is also
/// the URLSession's delegate queue).
public let driverSession: Session = {
    let rootQueue = DispatchQueue(label: "authmock.driver.session.rootQueue")
    let delegateQueue = OperationQueue()
    delegateQueue.maxConcurrentOperationCount = 1
    delegateQueue.underlyingQueue = rootQueue
    let delegate = SessionDelegate()
    let urlSession = URLSession(
        configuration: URLSessionConfiguration.af.default, delegate: CorelibsSafeDelegate(delegate), delegateQueue: delegateQueue)
    return Session(session: urlSession, delegate: delegate, rootQueue: rootQueue)
}()

/// The app's side of either recipe: sign in with the password grant, then
/// make each call through Alamofire with the recipe's interceptor.
public struct AlamofireDriver: DriverClient {
    public let hello: Hello
    public let interceptor: any RequestInterceptor
    /// Keeps the tokens of a sign-in where the recipe wants them.
    public let signedIn: @Sendable (TokenResponse) -> Void

    public init(hello: Hello, interceptor: any RequestInterceptor, signedIn: @escaping @Sendable (TokenResponse) -> Void) {
        self.hello = hello
        self.interceptor = interceptor
        self.signedIn = signedIn
    }

    public var tokenURL: URL { URL(string: hello.baseURL + "/oauth/token")! }
    public var clientAuthorization: HTTPHeader { .authorization(username: hello.clientID, password: hello.clientSecret) }

    /// The token grant (sign-in or refresh), through a session without the
    /// interceptor. A failure is a `GrantFailed`, so that the app can tell a
    /// refresh that failed from a call that did.
    public func grant(_ parameters: [String: String]) async -> Result<TokenResponse, any Error> {
        await driverSession.request(tokenURL, method: .post, parameters: parameters, headers: [clientAuthorization])
            .validate().serializingDecodable(TokenResponse.self).result.mapError { GrantFailed(error: $0) }
    }

    public func login(username: String, password: String) async -> DriverOutcome {
        switch await grant(["grant_type": "password", "username": username, "password": password]) {
        case .success(let tokens):
            signedIn(tokens)
            return DriverOutcome(.ok)
        case .failure(let error):
            return DriverOutcome(.httpError, status: (error as? GrantFailed)?.error.responseCode, message: "\(error)")
        }
    }

    public func request(_ request: DriverRequest) async -> DriverOutcome {
        var urlRequest = URLRequest(url: URL(string: request.url ?? hello.baseURL + request.path)!)
        urlRequest.method = HTTPMethod(rawValue: request.method)
        urlRequest.headers = HTTPHeaders(request.headers)
        urlRequest.httpBody = request.body.map { Data($0.utf8) }
        // validate() matters: the retrier only sees responses that failed validation (Alamofire/Alamofire#2756).
        let interceptor = Interceptor(retriers: [ProgressTotalsReset()], interceptors: [interceptor])
        let response = await driverSession.request(urlRequest, interceptor: interceptor).validate().serializingString().response
        // The retrier gave up, or the adapter could not renew a token that
        // ran out by the device's clock. With a refresh's error: the token
        // endpoint refused the refresh token (400 or 401), so the app shows
        // its sign-in screen; any other refresh failure (a 503, a 429, a
        // reset) is an error the app shows, the session kept. With the call's
        // own error, the app sees the call's answer, below.
        if let refresh = Self.refreshError(response.error) {
            let status = refresh.error.responseCode
            if status == 400 || status == 401 { return DriverOutcome(.reauthRequired, status: status, message: "\(response.error!)") }
            // A call the adapter stopped was never sent: the status is the refresh's, not the call's.
            guard response.response != nil else { return DriverOutcome(.transportError, message: "the refresh failed: \(refresh.error)") }
            return DriverOutcome(status == nil ? .transportError : .httpError, status: status, message: "the refresh failed: \(refresh.error)")
        }
        guard let status = response.response?.statusCode else {
            return DriverOutcome(.transportError, message: "\(String(describing: response.error))")
        }
        let body = response.data.map { String(decoding: $0, as: UTF8.self) }
        return DriverOutcome((200..<300).contains(status) ? .ok : .httpError, status: status, body: body)
    }

    /// The refresh's own failure inside Alamofire's error, from either path.
    static func refreshError(_ error: AFError?) -> GrantFailed? {
        switch error {
        case .requestRetryFailed(let retryError, _)?: retryError as? GrantFailed
        case .requestAdaptationFailed(let adaptError)?: adaptError as? GrantFailed
        default: nil
        }
    }
}
