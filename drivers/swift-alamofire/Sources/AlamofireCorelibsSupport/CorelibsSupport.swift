// Alamofire on swift-corelibs-foundation, unmodified: the two places where
// corelibs differs from Apple's Foundation in a way Alamofire 5.12 meets,
// answered from outside the library. Shared by every driver built on
// Alamofire (this package's recipes, and Moya's in ../swift-moya-rx).
@_exported import Alamofire
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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

/// A session of unmodified Alamofire behind `CorelibsSafeDelegate`, built
/// as `Session(configuration:startRequestsImmediately:)` builds its own (a
/// serial root queue that is also the URLSession's delegate queue). Moya's
/// providers take one with `startRequestsImmediately: false`, as Moya's
/// own default session is.
public func corelibsSafeSession(
    configuration: URLSessionConfiguration = URLSessionConfiguration.af.default, startRequestsImmediately: Bool = true
) -> Session {
    let rootQueue = DispatchQueue(label: "authmock.driver.session.rootQueue")
    let delegateQueue = OperationQueue()
    delegateQueue.maxConcurrentOperationCount = 1
    delegateQueue.underlyingQueue = rootQueue
    let delegate = SessionDelegate()
    let urlSession = URLSession(configuration: configuration, delegate: CorelibsSafeDelegate(delegate), delegateQueue: delegateQueue)
    return Session(session: urlSession, delegate: delegate, rootQueue: rootQueue, startRequestsImmediately: startRequestsImmediately)
}
