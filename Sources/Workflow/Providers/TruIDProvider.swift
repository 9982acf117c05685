import CellpathCore

/// tru.ID as a provider: a SubscriberCheck (or PhoneCheck) on a development server or the
/// tru.ID API (`CheckBackend`), opened as tru.ID's SDKs open it.
public struct TruIDProvider: SilentAuthProvider {
    public let backend: any CheckBackend
    public let product: CheckProduct

    public init(backend: any CheckBackend, product: CheckProduct = .subscriberCheck) {
        self.backend = backend
        self.product = product
    }

    public var name: String { backend.name }
    public var deviceLeg: DeviceLegRules { .truID }

    public func create(phoneNumber: String, options: CheckOptions) async throws(CellpathError) -> CreatedCheckHandle {
        try await backend.create(product, phoneNumber: phoneNumber, options: options)
    }

    public func complete(
        _ verification: CreatedCheckHandle, ending: CheckCallback?
    ) async throws(CellpathError)
        -> CheckVerdict
    {
        try await backend.complete(product, check: verification, callback: ending)
    }
}
