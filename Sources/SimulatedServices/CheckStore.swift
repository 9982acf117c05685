/// The checks the fake API remembers, at most `capacity` of them. A check beyond the capacity
/// makes room by forgetting a tenth of it: the oldest EXPIRED checks first, then the oldest
/// other ended ones (COMPLETED, ERROR), and only then the oldest open ones. A forgotten check
/// is 404 `check_not_found`, as an unknown one is.
struct CheckStore: Sendable {
    let capacity: Int
    /// The checks by id.
    private(set) var records: [String: CheckRecord] = [:]
    /// The ids of `records`, oldest first.
    private var creationOrder: [String] = []

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    subscript(id: String) -> CheckRecord? { records[id] }

    /// Stores `record`: replaces the check of its id, or adds it as the newest (making room).
    mutating func store(_ record: CheckRecord) {
        guard records.updateValue(record, forKey: record.id) == nil else { return }
        creationOrder.append(record.id)
        makeRoom()
    }

    /// Forgets checks, in the order of the type's comment, until a tenth of the capacity is free.
    private mutating func makeRoom() {
        guard records.count > capacity else { return }
        let excess = records.count - capacity + capacity / 10
        let ranks: [(CheckRecord) -> Bool] = [{ $0.status == .expired }, { !$0.status.isOpen }, { _ in true }]
        var forgotten = Set<String>()
        for rank in ranks where forgotten.count < excess {
            for id in creationOrder where forgotten.count < excess && !forgotten.contains(id) {
                if let record = records[id], rank(record) { forgotten.insert(id) }
            }
        }
        for id in forgotten { records[id] = nil }
        creationOrder.removeAll { forgotten.contains($0) }
    }
}
