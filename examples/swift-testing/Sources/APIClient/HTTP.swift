import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// URLSession, the one way this client reaches the network.
struct HTTP: Sendable {
    private let session: URLSession
    private let challenges = ChallengesLeftToTheApp()

    /// Whether a request may go on a connection an earlier one left open.
    private let reusesConnections: Bool

    init(timeout: Double, reusesConnections: Bool = true) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        // Authorization is the client's business: no cookies, no cached answers.
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        session = URLSession(configuration: configuration, delegate: challenges, delegateQueue: nil)
        self.reusesConnections = reusesConnections
    }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        var request = request
        // Closed after its answer, so no later request is sent on it.
        if !reusesConnections { request.setValue("close", forHTTPHeaderField: "Connection") }
        let challenges = self.challenges
        let task = TaskHandle()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let dataTask = session.dataTask(with: request) { data, response, error in
                    let declined = task.identifier.flatMap { challenges.takeDeclined(for: $0) }
                    if let http = response as? HTTPURLResponse, error == nil {
                        continuation.resume(returning: (data ?? Data(), http))
                    } else if let declined, (error as? URLError)?.code == .cancelled {
                        // FoundationNetworking (Linux) cancels a task whose
                        // challenge was declined where Apple's URLSession
                        // completes it with the 401: the 401 is the challenge's.
                        continuation.resume(returning: (Data(), declined))
                    } else {
                        continuation.resume(throwing: error ?? APIError.transport("not an HTTP answer"))
                    }
                }
                task.start(dataTask)
            }
        } onCancel: {
            task.cancel()
        }
    }
}

/// The data task of one call, for its cancellation and its challenges.
private final class TaskHandle: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    var identifier: Int? { lock.withLock { task?.taskIdentifier } }

    func start(_ task: URLSessionDataTask) {
        let cancelled = lock.withLock {
            self.task = task
            return self.cancelled
        }
        if cancelled { task.cancel() } else { task.resume() }
    }

    func cancel() {
        lock.withLock {
            cancelled = true
            return task
        }?.cancel()
    }
}

/// A 401 is the app's to read (its WWW-Authenticate says whether a new
/// token helps): URLSession answers no challenge itself and never asks the
/// user. The 401 that carried a declined challenge is kept for its task.
private final class ChallengesLeftToTheApp: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var declined: [Int: HTTPURLResponse] = [:]

    func takeDeclined(for task: Int) -> HTTPURLResponse? { lock.withLock { declined.removeValue(forKey: task) } }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        if let response = challenge.failureResponse as? HTTPURLResponse {
            lock.withLock { declined[task.taskIdentifier] = response }
        }
        completionHandler(.rejectProtectionSpace, nil)
    }
}
