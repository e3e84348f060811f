//! Columnar result tables, filled at the end of a run (never per packet,
//! except the opt-in traces which append to preallocated vectors).

#[derive(Debug, Clone, PartialEq)]
pub enum Col {
    F64(Vec<f64>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    U32(Vec<u32>),
    Str(Vec<String>),
}

impl Col {
    pub fn len(&self) -> usize {
        match self {
            Col::F64(v) => v.len(),
            Col::I64(v) => v.len(),
            Col::U64(v) => v.len(),
            Col::U32(v) => v.len(),
            Col::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named table; float columns use NaN for "no value" (written as null).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub name: String,
    pub columns: Vec<(String, Col)>,
}

impl Table {
    pub fn new(name: &str) -> Table {
        Table { name: name.to_string(), columns: Vec::new() }
    }
    pub fn col(mut self, name: &str, c: Col) -> Table {
        if let Some((_, first)) = self.columns.first() {
            assert_eq!(first.len(), c.len(), "column {name} of table {} has a different length", self.name);
        }
        self.columns.push((name.to_string(), c));
        self
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map(|(_, c)| c.len()).unwrap_or(0)
    }
    pub fn get(&self, name: &str) -> Option<&Col> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
    pub fn f64(&self, name: &str) -> &[f64] {
        match self.get(name) {
            Some(Col::F64(v)) => v,
            _ => panic!("no f64 column {name} in {}", self.name),
        }
    }
    pub fn u64(&self, name: &str) -> &[u64] {
        match self.get(name) {
            Some(Col::U64(v)) => v,
            _ => panic!("no u64 column {name} in {}", self.name),
        }
    }
}
