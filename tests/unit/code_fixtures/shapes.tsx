// A fixture for tests/unit/test_code_grammars.py: TSX.
import React from "react";

interface Props {
  title: string;
}

export const Card = ({ title }: Props): JSX.Element => {
  return <div className="card">{title}</div>;
};

export default function App(): JSX.Element {
  return <Card title="hello" />;
}
